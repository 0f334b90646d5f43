"""``semiparse bench neural``: the neural parser's speed, side by side in one run.

On the same sentences and the same network (docs/neural.md):

* training, lockstep: minibatches advanced together, one forward pass and
  one ``scores_batch`` call per step, one backward pass per minibatch;
* training, one at a time: the same loss, one sentence and one configuration
  at a time with one ``oracle.scores`` call each and one backward pass per
  sentence, as UUParser does (de Lhoneux, Stymne and Nivre 2017); the optimizer steps
  once per minibatch in both, so only the way the loss is computed differs;
* parsing, batched greedy decoding against one sentence at a time;
* the encoder alone (forward and backward over the same sentences), in
  minibatches against one sentence at a time: how much batching gains on
  the network's largest part on this device, a ceiling for the training
  ratio where the encoder dominates.

It prints sentences per second of each (wall time: torch may use several
threads), the ratios (target: lockstep >= 10x one at a time) and the
oracle's share of a lockstep epoch (target <= 15% with the exact
non-projective oracle, ``--nonproj oracle``, on Gothic).  Each run starts
from the same weights after an untimed warm-up minibatch.  One-at-a-time
training is timed on the first ``--loop-sentences`` sentences only (it is
slow); its rate is per sentence like the others.
"""
import random
import sys
import time

from semiparse.bench._inputs import COMPLETE, ud_train_file

TARGET_RATIO = 10.0
TARGET_SHARE = 0.15


def add_parser(subparsers):
    parser = subparsers.add_parser(
        "neural", help="neural parser: lockstep vs one-at-a-time training, parsing, oracle share",
        description="Sentences per second of the neural parser's lockstep training and batched "
        "parsing against one sentence and one configuration at a time, and the oracle's share "
        "of a lockstep epoch (default data: the first sentences of "
        "$SEMIPARSE_DATA/ud/UD_Gothic-PROIEL/got_proiel-ud-train.conllu).",
    )
    parser.add_argument("file", nargs="?", metavar="TRAIN.conllu")
    parser.add_argument("--sentences", type=int, default=400)
    parser.add_argument("--loop-sentences", type=int, default=100,
                        help="sentences trained one at a time (default 100)")
    parser.add_argument("--system", default="arc_hybrid")
    parser.add_argument("--oracle", default="dynamic", choices=("static", "nondet", "dynamic"))
    parser.add_argument("--nonproj", default="oracle", choices=("oracle", "projectivize", "subset"))
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--small", action="store_true",
                        help="a small network (word 32, BiLSTM 1 x 32, MLP 32) instead of the "
                        "defaults of Kiperwasser and Goldberg 2016")
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--threads", type=int, help="torch CPU threads (default torch's)")
    parser.add_argument("--oracle-threads", type=int, default=1,
                        help="threads of the lockstep scores_batch calls (default 1)")
    parser.set_defaults(func=run)
    return parser


SMALL = dict(word_dim=32, char_dim=8, char_hidden=16, upos_dim=8, lstm_dim=32, lstm_layers=1,
             hidden_dim=32, label_hidden_dim=32)


def run(args):
    from semiparse.cli import UserError
    from semiparse.neural import _torch, check_device

    torch = _torch()
    from semiparse.neural.lockstep import Policy, TrainingOracle
    from semiparse.neural.options import Options, check_threads
    from semiparse.neural.trainer import NeuralTrainer, training_trees
    from semiparse.neural.parser import NeuralModel
    from semiparse.neural.vocab import Vocab
    from semiparse.treebank.projectivity import is_projective
    from semiparse.treebank.data import complete_trees

    try:
        check_device(args.device)
    except ValueError as exc:
        raise UserError(f"--device: {exc}") from None
    if min(args.sentences, args.loop_sentences, args.batch_size, args.oracle_threads) < 1:
        raise UserError("--sentences, --loop-sentences, --batch-size and --oracle-threads must be >= 1")
    if args.threads is not None:
        check_threads(args.threads)
        torch.set_num_threads(args.threads)
    if args.oracle == "static" and args.nonproj == "oracle":  # Options names encode, not here
        raise UserError("the static oracle needs projective trees: use --nonproj projectivize or "
                        "subset")
    options = Options(**(SMALL if args.small else {}), oracle=args.oracle, nonproj=args.nonproj,
                      batch_size=args.batch_size, device=args.device, seed=1)
    path = args.file or ud_train_file("UD_Gothic-PROIEL", "got_proiel")
    trees = training_trees(complete_trees(path, COMPLETE)[:args.sentences], args.nonproj,
                           args.oracle)
    nonproj = sum(not is_projective(t.heads) for t in trees)
    torch.manual_seed(1)
    model = NeuralModel(args.system, Vocab.build(trees), options,
                        {"root_label": trees[0].labels[1]}).to(args.device)
    initial = {k: v.clone() for k, v in model.net.state_dict().items()}
    examples = NeuralTrainer(args.system, options).examples(model, trees)
    tokens = sum(len(t) for t in trees)
    print(f"{path}: {len(trees)} sentences ({nonproj} non-projective), {tokens} tokens; "
          f"{model.system}, --oracle {args.oracle} --nonproj {args.nonproj}, batch {args.batch_size}, "
          f"{'small' if args.small else 'default'} network ({model.n_parameters()} parameters), "
          f"{args.device}, {torch.get_num_threads()} threads, oracle on {args.oracle_threads}")

    def epoch(batched, count):
        """Seconds of one training pass over the first ``count`` examples and
        the oracle's seconds in it, from the initial weights."""
        model.net.load_state_dict(initial)
        model.net.train()
        optimizer = torch.optim.Adam(model.net.parameters(), lr=options.lr)
        oracle = TrainingOracle(model.api, model.transitions, args.oracle, threads=args.oracle_threads)
        policy = Policy(args.oracle, options.explore_p, random.Random(1))
        policy.explore = args.oracle == "dynamic"
        chosen = examples[:count]
        batches = [chosen[k:k + args.batch_size] for k in range(0, len(chosen), args.batch_size)]
        step = lambda batch: _train_step(model, batch, oracle, policy, optimizer, batched,
                                         options.loss)
        step(batches[0])  # untimed warm-up
        oracle.seconds = 0.0
        start = time.perf_counter()
        for batch in batches:
            step(batch)
        return time.perf_counter() - start, oracle.seconds

    def parse(batched, count):
        chosen = trees[:count]
        model.parse(chosen[:4])  # untimed warm-up
        start = time.perf_counter()
        if batched:
            model.parse(chosen, batch_size=args.batch_size)
        else:
            for tree in chosen:
                model.parse([tree])
        return time.perf_counter() - start

    def encoder(batched, count):
        """Seconds of the encoder's forward and backward passes alone over the
        first ``count`` sentences, in minibatches or one sentence at a time."""
        model.net.train()
        ids = [e.ids for e in examples[:count]]
        size = args.batch_size if batched else 1
        groups = [ids[k:k + size] for k in range(0, len(ids), size)]
        model.net.encode(groups[0])[0].sum().backward()  # untimed warm-up
        start = time.perf_counter()
        for group in groups:
            model.net.encode(group)[0].sum().backward()
        return time.perf_counter() - start

    loop_count = min(args.loop_sentences, len(trees))
    lock_s, lock_oracle = epoch(True, len(trees))
    loop_s, loop_oracle = epoch(False, loop_count)
    parse_batched = parse(True, len(trees))
    parse_single = parse(False, loop_count)
    encoder_batched = encoder(True, len(trees))
    encoder_single = encoder(False, loop_count)
    rate = lambda count, seconds: count / seconds
    rows = [("train, lockstep", len(trees), lock_s, lock_oracle),
            ("train, one at a time", loop_count, loop_s, loop_oracle),
            ("parse, batched", len(trees), parse_batched, None),
            ("parse, one at a time", loop_count, parse_single, None),
            ("encoder, batched", len(trees), encoder_batched, None),
            ("encoder, one at a time", loop_count, encoder_single, None)]
    print(f"{'':22s} {'sentences':>9s} {'seconds':>8s} {'sent/s':>8s} {'oracle share':>13s}")
    for name, count, seconds, oracle in rows:
        share = f"{100 * oracle / seconds:12.1f}%" if oracle is not None else ""
        print(f"{name:22s} {count:9d} {seconds:8.2f} {rate(count, seconds):8.1f} {share:>13s}")
    train_ratio = rate(len(trees), lock_s) / rate(loop_count, loop_s)
    parse_ratio = rate(len(trees), parse_batched) / rate(loop_count, parse_single)
    encoder_ratio = rate(len(trees), encoder_batched) / rate(loop_count, encoder_single)
    share = lock_oracle / lock_s
    verdict = lambda ok: "meets" if ok else "misses"
    print(f"training: lockstep {train_ratio:.1f}x one at a time ({verdict(train_ratio >= TARGET_RATIO)} "
          f"target {TARGET_RATIO:.0f}x); parsing: batched {parse_ratio:.1f}x one at a time")
    print(f"the encoder's forward and backward passes alone: batched {encoder_ratio:.1f}x one at a "
          f"time (what minibatches gain on the network's largest part on this device)")
    print(f"oracle share of a lockstep epoch: {100 * share:.1f}% "
          f"({verdict(share <= TARGET_SHARE)} target {100 * TARGET_SHARE:.0f}%)")
    sys.stdout.flush()
    return 0


def _train_step(model, batch, oracle, policy, optimizer, batched, loss):
    """One optimizer step on a minibatch: its loss in lockstep (one backward
    pass) or sentence by sentence (one backward pass each)."""
    from semiparse.neural.lockstep import lockstep_loss, sentence_loss

    optimizer.zero_grad()
    if batched:
        out = lockstep_loss(model.net, batch, model.transitions, oracle, model.reader, policy, loss)
        (out.loss / len(batch)).backward()
    else:
        for example in batch:
            out = sentence_loss(model.net, example, model.transitions, oracle, model.reader, policy,
                                loss)
            (out.loss / len(batch)).backward()
    optimizer.step()
