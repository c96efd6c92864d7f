"""torch.save/torch.load's C++ half: the zip archive reader/writer and storage I/O."""
