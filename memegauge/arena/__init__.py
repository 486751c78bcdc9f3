"""MemeArena: context simulation, multi-view fusion, pairwise judging, ranking and bias analysis."""
