"""A small d2l-style Transformer (d2l-en v1.0.3's MXNet code, reduced), shared by
tools/gen_d2l_dropout_fixtures.py (real MXNet 1.9.1) and tests/test_d2l_dropout.py (neogluon).

It keeps every place the book applies dropout: the positional encoding's output, the attention
weights after the masked softmax (DotProductAttention) and each AddNorm's sublayer output; and
the book's decoder rule that builds the causal mask only when ``autograd.is_training()``, so
that a validation pass (outside ``autograd.record``) sees a different model than training does.
``build(mx)`` takes the module (``mxnet`` or ``neogluon``) and returns the model and its loss.
"""
import math

VOCAB, HIDDEN, HEADS, FFN, BLOCKS, STEPS, BATCH, DROPOUT = 20, 16, 2, 24, 2, 6, 8, 0.2


def build(mx):
    autograd, gluon, np, npx = mx.autograd, mx.gluon, mx.np, mx.npx
    nn = gluon.nn

    def masked_softmax(X, valid_lens):
        if valid_lens is None:
            return npx.softmax(X)
        shape = X.shape
        if valid_lens.ndim == 1:
            valid_lens = valid_lens.repeat(shape[1])
        else:
            valid_lens = valid_lens.reshape(-1)
        X = npx.sequence_mask(X.reshape(-1, shape[-1]), valid_lens, True, value=-1e6, axis=1)
        return npx.softmax(X).reshape(shape)

    class DotProductAttention(nn.Block):
        def __init__(self, dropout):
            super().__init__()
            self.dropout = nn.Dropout(dropout)

        def forward(self, q, k, v, valid_lens=None):
            scores = npx.batch_dot(q, k, transpose_b=True) / math.sqrt(q.shape[-1])
            return npx.batch_dot(self.dropout(masked_softmax(scores, valid_lens)), v)

    class MultiHeadAttention(nn.Block):
        def __init__(self, dropout):
            super().__init__()
            self.attention = DotProductAttention(dropout)
            self.W_q, self.W_k, self.W_v, self.W_o = (
                nn.Dense(HIDDEN, use_bias=False, flatten=False) for _ in range(4))

        def split(self, X):
            X = X.reshape(X.shape[0], X.shape[1], HEADS, -1).transpose(0, 2, 1, 3)
            return X.reshape(-1, X.shape[2], X.shape[3])

        def forward(self, q, k, v, valid_lens):
            q, k, v = self.split(self.W_q(q)), self.split(self.W_k(k)), self.split(self.W_v(v))
            if valid_lens is not None:
                valid_lens = valid_lens.repeat(HEADS, axis=0)
            out = self.attention(q, k, v, valid_lens)
            out = out.reshape(-1, HEADS, out.shape[1], out.shape[2]).transpose(0, 2, 1, 3)
            return self.W_o(out.reshape(out.shape[0], out.shape[1], -1))

    class AddNorm(nn.Block):
        def __init__(self, dropout):
            super().__init__()
            self.dropout = nn.Dropout(dropout)
            self.ln = nn.LayerNorm()

        def forward(self, X, Y):
            return self.ln(self.dropout(Y) + X)

    class PositionWiseFFN(nn.Block):
        def __init__(self):
            super().__init__()
            self.dense1 = nn.Dense(FFN, flatten=False, activation='relu')
            self.dense2 = nn.Dense(HIDDEN, flatten=False)

        def forward(self, X):
            return self.dense2(self.dense1(X))

    class PositionalEncoding(nn.Block):
        def __init__(self, dropout, max_len=50):
            super().__init__()
            self.dropout = nn.Dropout(dropout)
            self.P = np.zeros((1, max_len, HIDDEN))
            X = np.arange(max_len).reshape(-1, 1) / np.power(
                10000, np.arange(0, HIDDEN, 2) / HIDDEN)
            self.P[:, :, 0::2] = np.sin(X)
            self.P[:, :, 1::2] = np.cos(X)

        def forward(self, X):
            return self.dropout(X + self.P[:, :X.shape[1], :])

    class EncoderBlock(nn.Block):
        def __init__(self, dropout):
            super().__init__()
            self.attention = MultiHeadAttention(dropout)
            self.addnorm1, self.addnorm2 = AddNorm(dropout), AddNorm(dropout)
            self.ffn = PositionWiseFFN()

        def forward(self, X, valid_lens):
            Y = self.addnorm1(X, self.attention(X, X, X, valid_lens))
            return self.addnorm2(Y, self.ffn(Y))

    class DecoderBlock(nn.Block):
        def __init__(self, dropout):
            super().__init__()
            self.attention1, self.attention2 = MultiHeadAttention(dropout), \
                MultiHeadAttention(dropout)
            self.addnorm1, self.addnorm2, self.addnorm3 = (AddNorm(dropout) for _ in range(3))
            self.ffn = PositionWiseFFN()

        def forward(self, X, enc, enc_valid_lens):
            if autograd.is_training():  # the book's rule: the causal mask in training only
                dec_valid_lens = np.tile(np.arange(1, X.shape[1] + 1), (X.shape[0], 1))
            else:
                dec_valid_lens = None
            Y = self.addnorm1(X, self.attention1(X, X, X, dec_valid_lens))
            Z = self.addnorm2(Y, self.attention2(Y, enc, enc, enc_valid_lens))
            return self.addnorm3(Z, self.ffn(Z))

    class Transformer(nn.Block):
        def __init__(self, dropout=DROPOUT):
            super().__init__()
            self.src_emb, self.tgt_emb = nn.Embedding(VOCAB, HIDDEN), nn.Embedding(VOCAB, HIDDEN)
            self.src_pos, self.tgt_pos = PositionalEncoding(dropout), PositionalEncoding(dropout)
            self.enc = nn.Sequential()
            self.dec = nn.Sequential()
            for _ in range(BLOCKS):
                self.enc.add(EncoderBlock(dropout))
                self.dec.add(DecoderBlock(dropout))
            self.dense = nn.Dense(VOCAB, flatten=False)

        def forward(self, src, tgt, src_valid_lens):
            X = self.src_pos(self.src_emb(src) * math.sqrt(HIDDEN))
            for blk in self.enc:
                X = blk(X, src_valid_lens)
            Y = self.tgt_pos(self.tgt_emb(tgt) * math.sqrt(HIDDEN))
            for blk in self.dec:
                Y = blk(Y, X, src_valid_lens)
            return self.dense(Y)

    ce = gluon.loss.SoftmaxCrossEntropyLoss()

    def loss(net, src, tgt, src_valid_lens, label):
        out = net(src, tgt, src_valid_lens)
        return ce(out.reshape(-1, VOCAB), label.reshape(-1)).mean()

    return Transformer, loss


def inputs(onp):
    rng = onp.random.RandomState(7)
    src = rng.randint(1, VOCAB, size=(BATCH, STEPS)).astype("float32")
    tgt = rng.randint(1, VOCAB, size=(BATCH, STEPS)).astype("float32")
    label = rng.randint(1, VOCAB, size=(BATCH, STEPS)).astype("float32")
    valid = rng.randint(2, STEPS + 1, size=(BATCH,)).astype("float32")
    return src, tgt, valid, label
