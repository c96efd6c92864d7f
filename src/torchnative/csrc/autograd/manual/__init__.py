"""FunctionsManual.cpp's helpers in Python, one module per operator family."""
