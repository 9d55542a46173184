"""Redis cache layers of design doc 003 ("Cache Strategy") behind the ``QueryCache`` port."""
