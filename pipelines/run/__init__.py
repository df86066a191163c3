"""Running a job: config, preflight, output staging, deployment options, progress, launcher."""
