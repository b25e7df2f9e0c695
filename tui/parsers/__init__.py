"""Pure parsers: bytes and lines in, typed records out. No I/O, no Textual."""
