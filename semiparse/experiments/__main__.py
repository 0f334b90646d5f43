import sys

from semiparse.experiments import main

sys.exit(main())
