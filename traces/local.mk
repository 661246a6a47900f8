# traces/: small real fixtures recorded by torch 2.11 on an H200.
