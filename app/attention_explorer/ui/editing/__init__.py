"""Where numbers are typed: the matrix tables and their panel, and the Controls panel."""
