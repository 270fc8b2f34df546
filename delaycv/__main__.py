import sys

from delaycv.cli import main

sys.exit(main())
