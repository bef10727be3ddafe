"""worker/switchml"""
