"""The edge of the service: the transports (HTTP and WebSocket) and what guards them (who the
caller is, admission, the allowance, the document limits and checks, the cost limit), the
caching of answers, and the schema served with its extensions."""
