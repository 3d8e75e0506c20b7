"""What the benchmarks share: timing and percentiles, the served stack and its settings, the
child processes and their CPU and memory, the boards and how they are loaded, the results
written to the output folder, and the charts."""
