"""The sentence encoder: a BiLSTM over word, character and tag vectors.

Kiperwasser and Goldberg 2016: each position 0..n (0 the artificial root)
is the concatenation of a word embedding, a character-level BiLSTM's final
states (so an unknown word still has a vector of its spelling), a UPOS
embedding and optionally XPOS, FEATS (as one symbol) and LEMMA embeddings;
a multi-layer BiLSTM over the sentence gives each position its vector.  In
training a word w is replaced by the unknown word with probability
``alpha / (count(w) + alpha)`` (word dropout), and with ``dropout`` > 0 the
BiLSTM's inputs, the vectors between its layers and its outputs are
dropped out, once per minibatch (every configuration of a sentence reads
the same vectors).  Nothing is downloaded: all embeddings are learned.

A minibatch is encoded in one call: padded, packed by length, and the
vectors of all sentences returned as the rows of one matrix, sentence after
sentence, with each sentence's first row (its root).
"""
import torch
from torch import nn
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence

from semiparse.neural.vocab import PAD, UNK


class Encoder(nn.Module):
    """Ids of a sentence's positions (:meth:`semiparse.neural.vocab.Vocab.sentence`)
    -> one vector of size ``2 * lstm_dim`` per position."""

    def __init__(self, options, vocab):
        super().__init__()
        o = options
        self.word_dropout = o.word_dropout
        self.words = nn.Embedding(len(vocab.words), o.word_dim, padding_idx=PAD)
        size = o.word_dim
        self.chars = None
        if o.char_dim:
            self.chars = nn.Embedding(len(vocab.chars), o.char_dim, padding_idx=PAD)
            self.char_lstm = nn.LSTM(o.char_dim, o.char_hidden, batch_first=True, bidirectional=True)
            size += 2 * o.char_hidden
        self.tags = nn.ModuleDict()
        for column, dim, table in (("upos", o.upos_dim, vocab.upos), ("xpos", o.xpos_dim, vocab.xpos),
                                   ("feats", o.feats_dim, vocab.feats),
                                   ("lemmas", o.lemma_dim, vocab.lemmas)):
            if dim:
                self.tags[column] = nn.Embedding(len(table), dim, padding_idx=PAD)
                size += dim
        self.lstm = nn.LSTM(size, o.lstm_dim, num_layers=o.lstm_layers, batch_first=True,
                            bidirectional=True, dropout=o.dropout if o.lstm_layers > 1 else 0.0)
        self.dropout = nn.Dropout(o.dropout)
        self.dim = 2 * o.lstm_dim

    @property
    def device(self):
        return self.words.weight.device

    def _char_vectors(self, sentences):
        """The character BiLSTM's final states for every word of the batch
        (each distinct spelling encoded once), in batch order."""
        spellings, index = {}, []
        for s in sentences:
            index.extend(spellings.setdefault(chars, len(spellings)) for chars in s["chars"])
        unique = list(spellings)
        lengths = torch.tensor([len(c) for c in unique])
        ids = torch.full((len(unique), int(lengths.max())), PAD, dtype=torch.long)
        for i, c in enumerate(unique):
            ids[i, :len(c)] = torch.tensor(c)
        packed = pack_padded_sequence(self.chars(ids.to(self.device)), lengths, batch_first=True,
                                      enforce_sorted=False)
        _, (h, _) = self.char_lstm(packed)
        vectors = torch.cat([h[0], h[1]], dim=1)  # final forward and backward states
        return vectors[torch.tensor(index, device=self.device)]

    def forward(self, sentences):
        """``(H, starts)``: H has one row per position of every sentence, in
        order; ``starts[i]`` is the row of sentence i's root."""
        device = self.device
        lengths = [len(s["words"]) for s in sentences]
        starts, total = [], 0
        for n in lengths:
            starts.append(total)
            total += n
        longest = max(lengths)

        def padded(column):
            out = torch.full((len(sentences), longest), PAD, dtype=torch.long)
            for i, s in enumerate(sentences):
                out[i, :lengths[i]] = torch.tensor(s[column])
            return out

        words = padded("words")
        if self.training and self.word_dropout > 0:
            counts = torch.zeros(len(sentences), longest)
            for i, s in enumerate(sentences):
                counts[i, :lengths[i]] = torch.tensor(s["counts"], dtype=torch.float)
            keep_p = counts / (counts + self.word_dropout)
            dropped = (torch.rand(counts.shape) >= keep_p) & (words != PAD)
            dropped[:, 0] = False  # the root stays
            words = words.masked_fill(dropped, UNK)
        parts = [self.words(words.to(device))]
        # rows of the flat position list inside the padded (B, longest) grid
        flat = torch.tensor([i * longest + p for i, n in enumerate(lengths) for p in range(n)],
                            device=device)
        if self.chars is not None:
            grid = torch.zeros(len(sentences) * longest, 2 * self.char_lstm.hidden_size,
                               device=device)
            grid = grid.index_copy(0, flat, self._char_vectors(sentences))
            parts.append(grid.view(len(sentences), longest, -1))
        for column, table in self.tags.items():
            parts.append(table(padded(column).to(device)))
        x = self.dropout(torch.cat(parts, dim=2))
        packed = pack_padded_sequence(x, torch.tensor(lengths), batch_first=True, enforce_sorted=False)
        out, _ = self.lstm(packed)
        out, _ = pad_packed_sequence(out, batch_first=True, total_length=longest)
        return self.dropout(out.reshape(len(sentences) * longest, -1)[flat]), starts
