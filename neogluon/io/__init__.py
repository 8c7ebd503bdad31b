"""Data iterators (``mx.io``): DataDesc, DataBatch, DataIter, NDArrayIter, ResizeIter,
PrefetchingIter, CSVIter, LibSVMIter, ImageRecordIter, ImageDetRecordIter, MNISTIter."""
from . import io
from .io import (DataDesc, DataBatch, DataIter, NDArrayIter, ResizeIter, PrefetchingIter,
                 CSVIter)
from .image_record import ImageRecordIter, ImageRecordUInt8Iter, ImageRecordInt8Iter
from .image_record import ImageRecordIter_v1, ImageRecordUInt8Iter_v1
from .image_det_record import ImageDetRecordIter
from .mnist import MNISTIter
from .libsvm import LibSVMIter
from . import utils
from .utils import _init_data, _getdata_by_idx, _has_instance
