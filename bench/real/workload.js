// workload.js - a CPU-heavy JavaScript program for Rhino (bench/java.sh, bench/real-java.sh).
// Word counting over generated text, object sorting, an n-body simulation and
// a sieve: property maps, string building, arrays and floating point, so that
// the engine's interpreter/compiled code, its property hash tables and its
// number boxing all get exercised. Usage: rhino workload.js [scale]
var scale = (typeof arguments !== 'undefined' && arguments.length > 0) ? parseInt(arguments[0]) : 10;

function rng(seed) {
    var s = seed;
    return function () { s = (s * 1103515245 + 12345) % 2147483648; return s / 2147483648; };
}

function words(n, rand) {
    var syll = ['ka', 'lo', 'mi', 'ne', 'ru', 'sa', 'to', 'vi', 'ze', 'po'];
    var out = [];
    for (var i = 0; i < n; i++) {
        var len = 1 + Math.floor(rand() * 3), w = '';
        for (var j = 0; j < len; j++) w += syll[Math.floor(rand() * syll.length)];
        out.push(w);
    }
    return out.join(' ');
}

function wordCount(text) {
    var counts = {}, list = text.split(' ');
    for (var i = 0; i < list.length; i++) {
        var w = list[i];
        counts[w] = (counts[w] || 0) + 1;
    }
    var keys = [];
    for (var k in counts) keys.push(k);
    keys.sort(function (a, b) { return counts[b] - counts[a] || (a < b ? -1 : 1); });
    return keys.length + ':' + keys[0];
}

function records(n, rand) {
    var recs = [];
    for (var i = 0; i < n; i++)
        recs.push({ id: i, score: Math.floor(rand() * 1000), name: 'r' + (i % 977) });
    recs.sort(function (a, b) { return a.score - b.score || a.id - b.id; });
    var sum = 0;
    for (var i = 0; i < recs.length; i += 7) sum += recs[i].score;
    return sum;
}

function nbody(steps) {
    var bodies = [];
    for (var i = 0; i < 5; i++)
        bodies.push({ x: i, y: i * 0.5, z: -i, vx: 0, vy: 0.01 * i, vz: 0, m: 1 + i * 0.1 });
    var dt = 0.01;
    for (var s = 0; s < steps; s++) {
        for (var i = 0; i < bodies.length; i++) {
            var bi = bodies[i];
            for (var j = i + 1; j < bodies.length; j++) {
                var bj = bodies[j];
                var dx = bi.x - bj.x, dy = bi.y - bj.y, dz = bi.z - bj.z;
                var d2 = dx * dx + dy * dy + dz * dz + 0.01;
                var mag = dt / (d2 * Math.sqrt(d2));
                bi.vx -= dx * bj.m * mag; bi.vy -= dy * bj.m * mag; bi.vz -= dz * bj.m * mag;
                bj.vx += dx * bi.m * mag; bj.vy += dy * bi.m * mag; bj.vz += dz * bi.m * mag;
            }
        }
        for (var i = 0; i < bodies.length; i++) {
            var b = bodies[i];
            b.x += dt * b.vx; b.y += dt * b.vy; b.z += dt * b.vz;
        }
    }
    return bodies[0].x;
}

function sieve(n) {
    var flags = [];
    for (var i = 0; i <= n; i++) flags[i] = true;
    var count = 0;
    for (var i = 2; i <= n; i++) {
        if (!flags[i]) continue;
        count++;
        for (var k = i + i; k <= n; k += i) flags[k] = false;
    }
    return count;
}

var rand = rng(42), check = [];
for (var round = 0; round < scale; round++) {
    check.push(wordCount(words(60000, rand)));
    check.push(records(40000, rand));
    check.push(nbody(20000).toFixed(6));
    check.push(sieve(300000));
}
print('workload.js: scale ' + scale + ', ' + check.slice(-4).join(' '));
