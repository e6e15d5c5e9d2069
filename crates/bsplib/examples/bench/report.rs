//! The statistics of a sample (minimum and median, a least-squares line)
//! and the table every section's rows end up in, with each row's verdict
//! against its target.

// ----- statistics ----------------------------------------------------------

/// Minimum and median of a sample.
#[derive(Clone, Copy)]
pub(super) struct Stats {
    pub(super) min: f64,
    pub(super) median: f64,
}

pub(super) fn stats(sample: &[f64]) -> Stats {
    let mut v = sample.to_vec();
    v.sort_by(f64::total_cmp);
    let n = v.len();
    let median = if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    };
    Stats { min: v[0], median }
}

/// Least-squares fit `y = a + b x`; returns `(a, b)`.
pub(super) fn fit_line(points: &[(f64, f64)]) -> (f64, f64) {
    let n = points.len() as f64;
    let mx = points.iter().map(|p| p.0).sum::<f64>() / n;
    let my = points.iter().map(|p| p.1).sum::<f64>() / n;
    let sxy: f64 = points.iter().map(|p| (p.0 - mx) * (p.1 - my)).sum();
    let sxx: f64 = points.iter().map(|p| (p.0 - mx) * (p.0 - mx)).sum();
    let b = sxy / sxx;
    (my - b * mx, b)
}

// ----- report --------------------------------------------------------------------

/// One row of the table; values are already in the row's unit.
pub(super) struct Row {
    pub(super) name: String,
    pub(super) unit: &'static str,
    pub(super) value: Stats,
    pub(super) baseline: Option<(String, Stats)>,
    pub(super) target: Target,
}

/// What a row is judged against.
pub(super) enum Target {
    /// The ratio to the baseline must be at most this.
    AtMost(f64, &'static str),
    /// The ratio to the baseline must be at least this.
    AtLeast(f64, &'static str),
    /// The value itself (min and median) must be at most this, in the
    /// row's unit.
    Under(f64),
    /// Nothing to judge here; the text says what to compare with.
    Info(&'static str),
}

impl Row {
    /// The target's text and, for ratio targets, whether the min/min and
    /// the median/median ratios meet it.
    fn judge(&self) -> String {
        let ratios = self
            .baseline
            .as_ref()
            .map(|(_, b)| (self.value.min / b.min, self.value.median / b.median));
        let (text, ok) = match (&self.target, ratios) {
            (Target::AtMost(t, what), Some((rmin, rmed))) => {
                (format!("<= {t}x {what}"), Some((rmin <= *t, rmed <= *t)))
            }
            (Target::AtLeast(t, what), Some((rmin, rmed))) => {
                (format!(">= {t}x {what}"), Some((rmin >= *t, rmed >= *t)))
            }
            (Target::Under(t), _) => (
                format!("<= {t} {}", self.unit),
                Some((self.value.min <= *t, self.value.median <= *t)),
            ),
            (Target::Info(what), _) => (what.to_string(), None),
            (_, None) => ("?".to_string(), None),
        };
        let verdict = match ok {
            Some((true, true)) => "  met",
            Some((true, false)) => "  met by min only",
            Some((false, true)) => "  met by median only",
            Some((false, false)) => "  MISSED",
            None => "",
        };
        format!("{text}{verdict}")
    }
}

/// A number in at most 9 characters, with about 4 significant digits.
fn num(v: f64) -> String {
    if v.abs() >= 1e6 {
        format!("{v:.3e}")
    } else if v.abs() >= 1e3 {
        format!("{v:.1}")
    } else {
        format!("{v:.2}")
    }
}

/// A ratio, readable also when tiny.
fn ratio(v: f64) -> String {
    if v.abs() >= 0.01 {
        format!("{v:.2}x")
    } else {
        format!("{v:.1e}x")
    }
}

pub(super) fn ns(s: Stats) -> Stats {
    Stats {
        min: s.min * 1e9,
        median: s.median * 1e9,
    }
}

pub(super) fn print_table(rows: &[Row]) {
    println!(
        "{:<33} {:<8} {:>9} {:>9} | {:<24} {:>9} {:>9} | {:>8} {:>8} | target",
        "measurement", "unit", "min", "median", "baseline", "min", "median", "ratio", "ratio"
    );
    println!(
        "{:<33} {:<8} {:>9} {:>9} | {:<24} {:>9} {:>9} | {:>8} {:>8} |",
        "", "", "(best)", "", "", "(best)", "", "min/min", "med/med"
    );
    println!("{}", "-".repeat(150));
    for r in rows {
        let (bname, bmin, bmed, rmin, rmed) = match &r.baseline {
            Some((name, b)) => (
                name.clone(),
                num(b.min),
                num(b.median),
                ratio(r.value.min / b.min),
                ratio(r.value.median / b.median),
            ),
            None => ("-".into(), "-".into(), "-".into(), "-".into(), "-".into()),
        };
        println!(
            "{:<33} {:<8} {:>9} {:>9} | {:<24} {:>9} {:>9} | {:>8} {:>8} | {}",
            r.name,
            r.unit,
            num(r.value.min),
            num(r.value.median),
            bname,
            bmin,
            bmed,
            rmin,
            rmed,
            r.judge()
        );
    }
}
