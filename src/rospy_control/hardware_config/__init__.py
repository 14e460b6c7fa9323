"""The hardware XML, read once: the document as plain, located data and the attribute reader."""
