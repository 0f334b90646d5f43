"""The system-file format (docs/oracles.md): the TOML schema and its line
numbers (``system_file``), transition rules (``rules``), the
``[completion]`` table (``completion``), refusing transitions that can loop
(``loops``) and the size limits (``limits``)."""
