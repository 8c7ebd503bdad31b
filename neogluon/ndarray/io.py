"""nd.save / nd.load (placeholder until the file-format work lands)."""


def save(fname, data):
    raise NotImplementedError("nd.save is being implemented")


def load(fname, ctx=None):
    raise NotImplementedError("nd.load is being implemented")
