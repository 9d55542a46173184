"""``knotwork worker``: processes the job queue (see :mod:`knotwork.services.worker.worker`)."""
