"""Graph nodes, one per module; ``agent.graph`` wires them."""
