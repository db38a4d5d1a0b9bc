def to_roman(n):
    raise NotImplementedError("to_roman")
