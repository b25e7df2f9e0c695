"""Sources move bytes and know nothing of verl: local files now, SSH next."""
