"""Host configuration: the entries hookbus adds to each host's settings."""
