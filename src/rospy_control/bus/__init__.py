"""The CAN bus: channels with their read/write thread, cycle timing and the event log."""
