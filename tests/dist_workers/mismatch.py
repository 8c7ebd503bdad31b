"""Workers that make different push calls: each gets a clear MXNetError, none aborts."""
import json

import mxnet as mx

kv = mx.kv.create("dist_sync")
kv.init([1, 2], [mx.nd.ones((3,)), mx.nd.ones((5,))])
try:
    if kv.rank == 0:
        kv.push([1, 2], [mx.nd.ones((3,)), mx.nd.ones((5,))])
    else:
        kv.push(1, mx.nd.ones((3,)))
    msg = None
except mx.base.MXNetError as err:
    msg = str(err)
print(json.dumps({"rank": kv.rank, "error": msg}), flush=True)
