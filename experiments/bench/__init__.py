"""experiments/bench"""
