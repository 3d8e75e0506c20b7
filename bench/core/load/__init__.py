"""The mixed workload's load on a served process, shared by the mixed workload and the
under-attack benchmarks: the stack it runs against, closed-loop clients in load-generator
processes, one level measured, the report's tables and the py-spy profile of the service."""
