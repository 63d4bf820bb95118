import java.util.ArrayList;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;

/*
 * Collections.java - a collections-heavy benchmark workload for bench/java.sh.
 *
 * Rounds of HashMap and ArrayList churn: fill a map with boxed keys and string
 * values, look keys up, remove half through an iterator, rebuild lists of
 * boxed integers and sort them. Allocation-heavy (young GCs all the time), so
 * it exercises the agent's GC epochs and per-thread tables as well as its
 * sampler. Usage: java -cp build/bench/java Collections [rounds]
 */
public class Collections {
    public static void main(String[] args) {
        int rounds = args.length > 0 ? Integer.parseInt(args[0]) : 150;
        long check = 0;
        for (int r = 0; r < rounds; r++)
            check += round(r);
        System.out.println("collections: " + rounds + " rounds, check " + check);
    }

    static long round(int r) {
        final int n = 200_000;
        Map<Integer, String> map = new HashMap<>();
        for (int i = 0; i < n; i++)
            map.put(i * 7 + r, "v" + (i & 1023));
        long sum = 0;
        for (int i = 0; i < 2 * n; i++) {
            String v = map.get(i);
            if (v != null)
                sum += v.length();
        }
        for (Iterator<Map.Entry<Integer, String>> it = map.entrySet().iterator(); it.hasNext();) {
            Map.Entry<Integer, String> e = it.next();
            if ((e.getKey() & 1) == 0)
                it.remove();
        }
        List<Integer> list = new ArrayList<>();
        for (Integer k : map.keySet())
            list.add(k ^ 0x5555);
        list.sort(null);
        for (int i = 0; i < list.size(); i += 3)
            sum += list.get(i);
        list.clear();
        for (int i = 0; i < n / 4; i++)
            list.add(i);
        return sum + map.size() + list.size();
    }
}
