"""A biaffine graph-based parser (Dozat and Manning 2017) trained with a
projective tree CRF loss from :mod:`semiparse.torch`, against the same
model trained with a per-word softmax over heads.

One small network for both: word and UPOS embeddings, a BiLSTM, two MLPs
(each position as a dependent and as a head) and a biaffine scorer
``s[h, d] = dep_d^T U head_h + u^T head_h``, with a learned root vector at
position 0.  The losses, per word of a minibatch:

- ``softmax``: cross-entropy of each word's gold head among all positions;
- ``crf``: ``-log p(gold tree)`` under the distribution over projective
  trees, ``log Z - score(gold)`` with ``semiparse.torch.log_partition``
  (exact; its gradient is the edge marginals).

Training trees are projectivized (``semiparse.projectivize``, optimal
projectivization) for both losses, so that every gold tree has a
probability under the CRF; both models are decoded with the projective
Viterbi tree of their scores (``TreeCRF.argmax``) and scored against the
original dev trees (UAS over all words, punctuation included).
"""

from semiparse._support.seeds import seeded
from semiparse.experiments.common import GOLD_UPOS, read_ud, select, ud_file

TITLE = "Biaffine parser (Dozat and Manning 2017): projective tree CRF loss vs per-word softmax"
SUMMARY = "dev UAS of a small biaffine parser trained with semiparse.torch's tree CRF loss vs softmax"
LANGUAGES = ("el",)
SYSTEMS = ("crf", "softmax")  # the losses
DEFAULTS = {"epochs": 5, "seeds": [1], "languages": ["el"], "systems": ["crf", "softmax"]}
POS_TAGS = GOLD_UPOS
SIZES = dict(word_dim=64, tag_dim=16, lstm_dim=96, mlp_dim=96, batch_size=32, lr=2e-3)


def files(settings):
    return [ud_file(lang, part) for lang in settings["languages"] for part in ("train", "dev")]


def jobs(settings):
    return [(settings["data"], lang, loss, seed, settings["epochs"], settings["limit"])
            for seed in settings["seeds"] for lang in settings["languages"]
            for loss in settings["systems"]]


def _network(n_words, n_tags, s):
    import torch
    from torch import nn

    class Biaffine(nn.Module):
        def __init__(self):
            super().__init__()
            self.words = nn.Embedding(n_words, s["word_dim"], padding_idx=0)
            self.tags = nn.Embedding(n_tags, s["tag_dim"], padding_idx=0)
            self.lstm = nn.LSTM(s["word_dim"] + s["tag_dim"], s["lstm_dim"], batch_first=True,
                                bidirectional=True)
            self.dep = nn.Sequential(nn.Linear(2 * s["lstm_dim"], s["mlp_dim"]), nn.ReLU())
            self.head = nn.Sequential(nn.Linear(2 * s["lstm_dim"], s["mlp_dim"]), nn.ReLU())
            self.U = nn.Parameter(torch.zeros(s["mlp_dim"], s["mlp_dim"]))
            self.u = nn.Parameter(torch.zeros(s["mlp_dim"]))

        def forward(self, words, tags):
            """``(B, N, N)`` scores ``s[b, h, d]`` of padded ids ``(B, N)``."""
            x, _ = self.lstm(torch.cat([self.words(words), self.tags(tags)], -1))
            dep, head = self.dep(x), self.head(x)
            return torch.einsum("bdi,ij,bhj->bhd", dep, self.U, head) + (head @ self.u)[:, :, None]

    return Biaffine()


def _encode(trees, words, tags):
    """Padded word and tag ids (position 0 the root: id 1) and lengths."""
    import torch

    N = max(len(t) for t in trees) + 1
    w = torch.zeros(len(trees), N, dtype=torch.long)
    t = torch.zeros(len(trees), N, dtype=torch.long)
    for b, tree in enumerate(trees):
        w[b, 0] = t[b, 0] = 1
        for i in range(1, len(tree) + 1):
            w[b, i] = words.get(tree.forms[i], 2)  # 2: unknown
            t[b, i] = tags.get(tree.tags[i], 2)
    return w, t, [len(tree) for tree in trees]


def _loss(kind, scores, heads, lengths):
    """Mean loss per word of a minibatch (``heads`` ``(B, N)``, -1 padding)."""
    import torch

    from semiparse.torch import log_partition

    B, N, _ = scores.shape
    d = torch.arange(N)
    mask = (d[None, :] >= 1) & (d[None, :] <= torch.tensor(lengths)[:, None])
    gold = torch.where(mask, heads, torch.zeros_like(heads))
    picked = scores.gather(1, gold[:, None, :]).squeeze(1)  # s[b, heads[d], d]
    words = mask.sum()
    if kind == "softmax":
        # positions beyond a sentence are no heads
        h_ok = d[None, :, None] <= torch.tensor(lengths)[:, None, None]
        log_p = torch.log_softmax(scores.masked_fill(~h_ok, float("-inf")), dim=1)
        return -log_p.gather(1, gold[:, None, :]).squeeze(1)[mask].sum() / words
    gold_score = picked.masked_fill(~mask, 0.0).sum(1)
    return (log_partition(scores, lengths=lengths) - gold_score).sum() / words


def run_job(job):
    """Train one model; dev UAS after every epoch."""
    import torch

    from semiparse.treebank.projectivity import projectivize
    from semiparse.torch import TreeCRF

    data, lang, loss, seed, epochs, limit = job
    torch.set_num_threads(1)
    torch.manual_seed(seed)
    rng = seeded(seed)
    train, dev = read_ud(data, lang, "train", limit), read_ud(data, lang, "dev", limit)
    counts = {}
    for tree in train:
        for form in tree.forms[1:]:
            counts[form] = counts.get(form, 0) + 1
    words = {f: i + 3 for i, f in enumerate(sorted(f for f, c in counts.items() if c >= 2))}
    tags = {t: i + 3 for i, t in enumerate(sorted({t for tree in train for t in tree.tags[1:]}))}
    gold = [projectivize(list(tree.heads)) for tree in train]
    net = _network(len(words) + 3, len(tags) + 3, SIZES)
    optimizer = torch.optim.Adam(net.parameters(), lr=SIZES["lr"], betas=(0.9, 0.9))
    order = list(range(len(train)))
    dev_uas, losses = [], []
    for _ in range(epochs):
        net.train()
        rng.shuffle(order)
        total = 0.0
        for start in range(0, len(order), SIZES["batch_size"]):
            batch = order[start:start + SIZES["batch_size"]]
            w, t, lengths = _encode([train[i] for i in batch], words, tags)
            heads = torch.full(w.shape, -1, dtype=torch.long)
            for b, i in enumerate(batch):
                heads[b, 1:len(gold[i])] = torch.tensor(gold[i][1:])
            value = _loss(loss, net(w, t), heads, lengths)
            optimizer.zero_grad()
            value.backward()
            optimizer.step()
            total += value.item() * len(batch)
        losses.append(total / len(train))
        dev_uas.append(_dev_uas(net, dev, words, tags, TreeCRF))
    return {"lang": lang, "loss": loss, "seed": seed, "epochs": epochs, "train_sentences": len(train),
            "dev_sentences": len(dev), "train_loss": losses, "dev_uas": dev_uas}


def _dev_uas(net, dev, words, tags, TreeCRF):
    """UAS (percent of words, punctuation included) of the projective Viterbi trees."""
    import torch

    net.eval()
    right = total = 0
    with torch.no_grad():
        for start in range(0, len(dev), 64):
            trees = dev[start:start + 64]
            w, t, lengths = _encode(trees, words, tags)
            best = TreeCRF(net(w, t).double(), lengths=lengths).argmax
            for b, tree in enumerate(trees):
                n = len(tree)
                right += sum(int(best[b, d]) == tree.heads[d] for d in range(1, n + 1))
                total += n
    return 100.0 * right / total


def table(results, settings):
    lines = ["Dev UAS (%, all words) after each epoch; mean over seeds.  Network "
             f"{SIZES} (Adam, betas 0.9 0.9); both losses decode the projective Viterbi tree.", ""]
    for lang in settings["languages"]:
        lines += [f"## {lang}", "", "| loss | " + " | ".join(f"epoch {e + 1}" for e in
                                                              range(settings["epochs"])) + " |",
                  "|---|" + "---|" * settings["epochs"]]
        for loss in settings["systems"]:
            rows = select(results, lang=lang, loss=loss)
            if rows:
                means = [sum(r["dev_uas"][e] for r in rows) / len(rows)
                         for e in range(settings["epochs"])]
                lines.append(f"| {loss} | " + " | ".join(f"{m:.2f}" for m in means) + " |")
        lines.append("")
    return lines
