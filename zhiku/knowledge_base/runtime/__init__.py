"""What runs the work: the job table, in-process and Celery workers, locks, uploads, signals."""
