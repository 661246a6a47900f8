"""ccasim-record as pip installs it: record/ccasim_record.py's main() with the
directory of its sitecustomize.py (the ccasim_record_site package)."""
import sys


def main():
    import ccasim_record
    import ccasim_record_site

    sitedir = list(ccasim_record_site.__path__)[0]
    sys.exit(ccasim_record.main(sys.argv[1:], sitedir=sitedir))
