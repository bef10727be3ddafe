"""worker/host"""
