"""What a process tells its operators: log lines and Prometheus metrics."""
