"""torch.distributed of the stand-in: only `run`, a launcher that says
whether this process records and runs its arguments as a command."""
