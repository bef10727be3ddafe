"""worker/atp"""
