"""A FedAvg experiment on digits, as a Flower app (the same one tests run through the Engine)."""
