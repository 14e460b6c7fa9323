"""Pure wire codecs (no I/O): :mod:`.mit` for MIT-mode motors, :mod:`.sensors` for our sensor frames."""
