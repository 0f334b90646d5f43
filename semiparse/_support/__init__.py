"""What the package needs that is no part of its subject: thread pools kept
between calls (``threads``), random generators from users' seeds
(``seeds``) and the forwarding of the previous layouts' module paths
(``moved``)."""
