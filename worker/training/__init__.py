"""Data-parallel training of a small model whose gradients are all-reduced by any collective of the testbed.

Modules:

- `data`: scikit-learn's bundled handwritten digits (1797 8x8 images, no download), standardized, split and sharded.
- `model`: a numpy MLP (64 -> hidden ReLU -> 10 softmax) whose gradients are one flat float32 vector (one bucket).
- `trainer`: the data-parallel loop: each rank computes its shard's gradient of the global batch, the collective
  sums the ranks' gradients, every rank applies the same SGD step; per-epoch loss and accuracy.
- `allreduce_sim`: in-process all-reduces for tests: an exact float sum and SwitchML's block floating point.
- `torch_hook`: a PyTorch DistributedDataParallel communication hook routing gradient buckets through a collective
  (needs torch, an optional extra).
- `__main__`: one rank on a Mininet host: `python -m worker.training --job job.json --rank R --protocol switchml`.
"""
