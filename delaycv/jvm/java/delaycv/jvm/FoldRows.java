/*
 * delaycv's fold loop for MOA learners, in Java: the steps of delaycv/engine/_loop.pyx
 * (run_rows) with MOA's calls made where they are, so that an instance crosses no language
 * boundary. Built by `python -m delaycv.jvm.build` (make venv); delaycv.jvm.rows calls it and
 * falls back to the Python loop, with the same results bit for bit, where it is not built.
 */
package delaycv.jvm;

import com.yahoo.labs.samoa.instances.Instance;
import com.yahoo.labs.samoa.instances.InstancesHeader;
import moa.classifiers.Classifier;

public final class FoldRows {

    private FoldRows() {}

    /** The SHA-256 of this source, as the build compiled it in (FoldRowsBuild is written by
     *  delaycv.jvm.build): delaycv.jvm.rows loads the class and compares. */
    public static final String SOURCE_SHA256 = FoldRowsBuild.SOURCE_SHA256;

    /** P(1) where class 1's vote is larger by less than the division can tell (MoaClassifier's). */
    static final double ABOVE_HALF = Math.nextUp(0.5);

    /** Indices of the counters array shared with Python. */
    public static final int C = 0, EVALUATED = 1, SKIPPED = 2, NO_PROBABILITY = 3, VOTES_AS_CLASS = 4,
            KEYS = 5, BEFORE = 6, ROW = 7;

    /** What the folds share of one chunk: its first instance's position ({@code start}: the
     *  chunk's instance m is row m - start - 1), the slot of the row before its first
     *  ({@code j0}), the instances by slot, and the candidates of the chunk's releases, in
     *  order (the instance each is due at, its slot, the side it waits on, its evaluation key;
     *  one more due position than candidates, past the chunk). */
    public static final class Chunk {
        final int start, j0;
        final Instance[] xOf;
        final int[] candAt, candSlot;
        final byte[] candSide;
        final long[] candKey;

        public Chunk(int start, int j0, Instance[] xOf, int[] candAt, int[] candSlot,
                byte[] candSide, long[] candKey) {
            this.start = start;
            this.j0 = j0;
            this.xOf = xOf;
            this.candAt = candAt;
            this.candSlot = candSlot;
            this.candSide = candSide;
            this.candKey = candKey;
        }
    }

    /** One fold's part of a chunk: its learner and threshold, whether it evaluates only what it
     *  trains on, its observed labels (of the candidates, and of the rows released at once on
     *  each side; -1: pending), its training weights and predicted sides by slot, the rows'
     *  P(1), the evaluation keys it adds and the counters it carries in and out. */
    public static final class Fold {
        final Classifier model;
        final double threshold;
        final boolean trainedOnly;
        final byte[] candObserved, atOnceN, atOnceP;
        final long[] wOf;
        final byte[] sideOf;
        final double[] p1Of;
        final long[] keys, counters;

        public Fold(Classifier model, double threshold, boolean trainedOnly, byte[] candObserved,
                byte[] atOnceN, byte[] atOnceP, long[] wOf, byte[] sideOf, double[] p1Of,
                long[] keys, long[] counters) {
            this.model = model;
            this.threshold = threshold;
            this.trainedOnly = trainedOnly;
            this.candObserved = candObserved;
            this.atOnceN = atOnceN;
            this.atOnceP = atOnceP;
            this.wOf = wOf;
            this.sideOf = sideOf;
            this.p1Of = p1Of;
            this.keys = keys;
            this.counters = counters;
        }
    }

    /**
     * Rows lo .. hi - 1 of the chunk (instance m = start + 1 + i, slot j = j0 + 1 + i) for the
     * fold, stopping after the row of instance {@code checkpoint}; returns the next row. The
     * counters (C .. KEYS) carry the loop's state in and out; BEFORE is the evaluations before
     * the last row run, ROW the row where the loop stopped (or failed).
     *
     * For each row: 1. release the candidates due at m whose side is the side this fold
     * predicted (their keys to {@code keys}, each trained with its weight); 2. predict m: P1
     * from MOA's votes as delaycv.jvm.learner.vote_probability reads them; 3. the policy's
     * outcome: released at once (key, trained) or pending on its side.
     */
    public static int run(Chunk chunk, Fold fold, int lo, int hi, long checkpoint) {
        final Classifier model = fold.model;
        final Instance[] xOf = chunk.xOf;
        final int[] candAt = chunk.candAt, candSlot = chunk.candSlot;
        final byte[] candSide = chunk.candSide, candObserved = fold.candObserved;
        final long[] candKey = chunk.candKey, wOf = fold.wOf, keys = fold.keys;
        final byte[] sideOf = fold.sideOf, atOnceN = fold.atOnceN, atOnceP = fold.atOnceP;
        final double[] p1Of = fold.p1Of;
        final double threshold = fold.threshold;
        final boolean trainedOnly = fold.trainedOnly;
        final long[] counters = fold.counters;
        final int start = chunk.start, j0 = chunk.j0;
        int c = (int) counters[C];
        long evaluated = counters[EVALUATED];
        long skipped = counters[SKIPPED];
        long noProbability = counters[NO_PROBABILITY];
        long votesAsClass = counters[VOTES_AS_CLASS];
        int nKeys = (int) counters[KEYS];
        long due = candAt[c];
        int i = lo;
        try {
            for (; i < hi; i++) {
                long m = start + 1 + i;
                int j = j0 + 1 + i;
                counters[BEFORE] = evaluated;
                // 1. release the candidates due at m that wait on the side this fold predicted
                while (due == m) {
                    int slot = candSlot[c];
                    if (sideOf[slot] == candSide[c]) {
                        keys[nKeys++] = candKey[c];
                        evaluated++;
                        train(model, xOf[slot], candObserved[c], wOf[slot]);
                    }
                    c++;
                    due = candAt[c];
                }
                // 2. predict m
                Instance x = xOf[j];
                double[] votes = model.getVotesForInstance(x);
                double v0 = votes.length > 0 ? votes[0] : 0.0;
                double v1 = votes.length > 1 ? votes[1] : 0.0;
                double total = v0 + v1;
                double p1;
                if (v0 >= 0 && v1 >= 0 && total < Double.POSITIVE_INFINITY) {
                    if (total > 0) {
                        p1 = v1 / total;  // one division, as MOA's evaluators normalise
                        if (v1 > v0 && !(p1 > 0.5)) {  // a tie made by rounding: MOA reads 1
                            p1 = ABOVE_HALF;
                        }
                    } else {
                        p1 = 0.5;
                        noProbability++;
                    }
                } else {  // votes that are no probabilities: the class of MOA's maxIndex
                    votesAsClass++;
                    p1 = v1 > v0 ? 1.0 : 0.0;
                }
                p1Of[i] = p1;
                int pred;
                int observed;
                if (p1 > threshold) {
                    pred = 1;
                    observed = atOnceP[i];
                } else {
                    pred = 0;
                    observed = atOnceN[i];
                }
                // 3. the policy's outcome: released now (scored, trained), or pending
                long w = wOf[j];
                if (trainedOnly && w == 0) {
                    skipped++;
                } else if (observed >= 0) {
                    keys[nKeys++] = 2 * m + pred;
                    evaluated++;
                    train(model, x, observed, w);
                } else {
                    sideOf[j] = (byte) pred;
                }
                if (m == checkpoint) {
                    i++;
                    break;
                }
            }
        } finally {
            counters[C] = c;
            counters[EVALUATED] = evaluated;
            counters[SKIPPED] = skipped;
            counters[NO_PROBABILITY] = noProbability;
            counters[VOTES_AS_CLASS] = votesAsClass;
            counters[KEYS] = nKeys;
            counters[ROW] = i;
        }
        return i;
    }

    /** Train on x with class y and weight w, as MoaClassifier.learn_one: the shared instance
     *  itself when it has that class and weight 1, else a copy (the shared one never changes). */
    static void train(Classifier model, Instance x, int y, long w) {
        if (w <= 0) {
            return;
        }
        if (w == 1 && x.classValue() == y) {
            model.trainOnInstance(x);
            return;
        }
        Instance copy = (Instance) x.copy();
        copy.setClassValue(y);
        if (w != 1) {
            copy.setWeight(w);
        }
        model.trainOnInstance(copy);
    }

    /** The instances by slot after a chunk: {@code previous} without its first {@code drop}
     *  (the slots the engine dropped), then the chunk's. */
    public static Instance[] window(Instance[] previous, int drop, Instance[] chunk) {
        int keep = previous.length - drop;
        Instance[] out = new Instance[keep + chunk.length];
        System.arraycopy(previous, drop, out, 0, keep);
        System.arraycopy(chunk, 0, out, keep, chunk.length);
        return out;
    }

    /** The instances of a chunk: rows of {@code width} values (features then the class), with
     *  the header; one Java call per chunk. */
    public static Instance[] instances(InstancesHeader header, double[] values, int width) {
        int n = values.length / width;
        Instance[] out = new Instance[n];
        for (int r = 0; r < n; r++) {
            double[] row = new double[width];
            System.arraycopy(values, r * width, row, 0, width);
            com.yahoo.labs.samoa.instances.DenseInstance inst =
                    new com.yahoo.labs.samoa.instances.DenseInstance(1.0, row);
            inst.setDataset(header);
            out[r] = inst;
        }
        return out;
    }
}
