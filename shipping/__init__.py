"""Build steps for what ships outside the repository (the projector's Lambda package)."""
