/*
 * delaycv's fold loop for MOA learners, in Java: the steps of delaycv/engine/_loop.pyx
 * (run_rows) with MOA's calls made where they are, so that an instance crosses no language
 * boundary. Built by `python -m delaycv.jvm.build` (make venv); delaycv.jvm.rows calls it and
 * falls back to the Python loop, with the same results bit for bit, where it is not built.
 */
package delaycv.jvm;

import com.yahoo.labs.samoa.instances.Instance;
import moa.classifiers.Classifier;

public final class FoldRows {

    private FoldRows() {}

    /** P(1) where class 1's vote is larger by less than the division can tell (MoaClassifier's). */
    static final double ABOVE_HALF = Math.nextUp(0.5);

    /** Indices of the counters array shared with Python. */
    public static final int C = 0, EVALUATED = 1, SKIPPED = 2, NO_PROBABILITY = 3, VOTES_AS_CLASS = 4,
            KEYS = 5, BEFORE = 6, ROW = 7;

    /**
     * Rows lo .. hi - 1 of a chunk (instance m = start + 1 + i, slot j = j0 + 1 + i), stopping
     * after the row of instance {@code checkpoint}; returns the next row. The counters (C ..
     * KEYS) carry the loop's state in and out; BEFORE is the evaluations before the last row
     * run, ROW the row where the loop stopped (or failed).
     *
     * For each row: 1. release the candidates due at m whose side is the side this fold
     * predicted (their keys to {@code keys}, each trained with its weight); 2. predict m: P1
     * from MOA's votes as delaycv.jvm.learner.MoaClassifier and the engine read them; 3. the
     * policy's outcome: released at once (key, trained) or pending on its side.
     */
    public static int run(
            Classifier model, Instance[] xOf, int start, int j0, int lo, int hi,
            int[] candAt, int[] candSlot, byte[] candSide, long[] candKey, byte[] candObserved,
            byte[] atOnceN, byte[] atOnceP, long[] wOf, byte[] sideOf, double[] p1Of,
            double threshold, boolean trainedOnly, long checkpoint, long[] counters, long[] keys) {
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
                        double a = v0 / total, b = v1 / total;
                        p1 = b / (0.0 + a + b);
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
    public static Instance[] instances(
            com.yahoo.labs.samoa.instances.InstancesHeader header, double[] values, int width) {
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
