"""Two small parent agents that embed the recall graph, one per embedding pattern."""
