"""The per-batch work of the Estimator, replaceable by the user."""
from .... import autograd
from ...utils import split_and_load

__all__ = ["BatchProcessor"]


class BatchProcessor:
    """Runs one training or validation batch for an :class:`Estimator`.

    Subclass it and override :meth:`fit_batch` or :meth:`evaluate_batch` to customise what
    happens on a batch (several inputs, a custom forward pass, ...), then pass an instance as
    ``Estimator(..., batch_processor=...)``.
    """

    def _get_data_and_label(self, batch, ctx, batch_axis=0):
        data = split_and_load(batch[0], ctx_list=ctx, batch_axis=batch_axis)
        label = split_and_load(batch[1], ctx_list=ctx, batch_axis=batch_axis)
        return data, label

    def evaluate_batch(self, estimator, val_batch, batch_axis=0):
        """Forward one validation batch.

        Parameters
        ----------
        estimator : Estimator
        val_batch : tuple
            ``(data, label)`` from the validation DataLoader.
        batch_axis : int, default 0
            The axis along which the batch is split across the estimator's contexts.

        Returns
        -------
        tuple
            ``(data, label, pred, loss)``, each a list with one entry per context.
        """
        data, label = self._get_data_and_label(val_batch, estimator.context, batch_axis)
        pred = [estimator.val_net(x) for x in data]
        loss = [estimator.val_loss(y_hat, y) for y_hat, y in zip(pred, label)]
        return data, label, pred, loss

    def fit_batch(self, estimator, train_batch, batch_axis=0):
        """Forward and backward one training batch (the update is GradientUpdateHandler's).

        Parameters
        ----------
        estimator : Estimator
        train_batch : tuple
            ``(data, label)`` from the training DataLoader.
        batch_axis : int, default 0

        Returns
        -------
        tuple
            ``(data, label, pred, loss)``, each a list with one entry per context.
        """
        data, label = self._get_data_and_label(train_batch, estimator.context, batch_axis)
        with autograd.record():
            pred = [estimator.net(x) for x in data]
            loss = [estimator.loss(y_hat, y) for y_hat, y in zip(pred, label)]
        autograd.backward(loss)
        return data, label, pred, loss
