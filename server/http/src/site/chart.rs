//! The rating-history chart of a bot page: an inline SVG with one line per
//! ladder, drawn from the ratings after each rated match.

/// Line colours, one per ladder (readable on white, distinct for common
/// colour-vision deficiencies: the Okabe–Ito palette).
const COLOURS: [&str; 6] = ["#0072b2", "#d55e00", "#009e73", "#cc79a7", "#e69f00", "#56b4e9"];

/// One ladder's line.
#[derive(Clone, Debug)]
pub struct Series {
    /// Ladder name.
    pub ladder: String,
    /// Stroke colour.
    pub colour: &'static str,
    /// SVG polyline points.
    pub points: String,
    /// Where the line ends (for the end dot).
    pub end_x: String,
    /// Where the line ends.
    pub end_y: String,
    /// First and last rating, rounded, and the number of matches.
    pub summary: String,
}

/// A horizontal grid line with its label.
#[derive(Clone, Debug)]
pub struct GridLine {
    /// Its y coordinate.
    pub y: String,
    /// The rating it marks.
    pub label: String,
}

/// The chart, ready for the template.
#[derive(Clone, Debug)]
pub struct Chart {
    /// Width of the drawing.
    pub width: u32,
    /// Height of the drawing.
    pub height: u32,
    /// Lines.
    pub series: Vec<Series>,
    /// Grid lines with labels.
    pub grid: Vec<GridLine>,
    /// The longest series' length, for the x-axis label.
    pub matches: usize,
    /// Left edge of the plot (after the labels).
    pub left: u32,
    /// Bottom edge of the plot.
    pub bottom: u32,
    /// Right edge of the plot.
    pub right: u32,
    /// A sentence for screen readers.
    pub description: String,
}

impl Chart {
    /// A chart of `series`: (ladder, the rating before the first rated
    /// match, then after each, in match order). `None` when no ladder has a
    /// rated match.
    pub fn new(series: &[(String, Vec<f64>)]) -> Option<Chart> {
        let series: Vec<&(String, Vec<f64>)> = series.iter().filter(|(_, r)| r.len() > 1).collect();
        if series.is_empty() {
            return None;
        }
        let (width, height, left, right, top, bottom) = (640u32, 240u32, 48u32, 628u32, 12u32, 212u32);
        let all = series.iter().flat_map(|(_, r)| r.iter().copied());
        let (mut min, mut max) = all.fold((f64::MAX, f64::MIN), |(lo, hi), v| (lo.min(v), hi.max(v)));
        // Round the range out to a multiple of 50 with a little margin.
        min = ((min - 10.0) / 50.0).floor() * 50.0;
        max = ((max + 10.0) / 50.0).ceil() * 50.0;
        let span = (max - min).max(50.0);
        let longest = series.iter().map(|(_, r)| r.len()).max().unwrap_or(1);
        let x = |i: usize| -> f64 {
            if longest <= 1 {
                f64::from(left + right) / 2.0
            } else {
                f64::from(left) + i as f64 * f64::from(right - left) / (longest - 1) as f64
            }
        };
        let y = |v: f64| -> f64 { f64::from(bottom) - (v - min) / span * f64::from(bottom - top) };
        let step = [50.0, 100.0, 200.0, 250.0, 500.0, 1000.0]
            .into_iter()
            .find(|s| span / s <= 6.0)
            .unwrap_or(2000.0);
        let mut grid = Vec::new();
        let mut value = (min / step).ceil() * step;
        while value <= max + 0.01 {
            grid.push(GridLine {
                y: format!("{:.1}", y(value)),
                label: format!("{value:.0}"),
            });
            value += step;
        }
        let lines: Vec<Series> = series
            .iter()
            .enumerate()
            .map(|(n, (ladder, ratings))| {
                let points: Vec<String> = ratings
                    .iter()
                    .enumerate()
                    .map(|(i, &v)| format!("{:.1},{:.1}", x(i), y(v)))
                    .collect();
                let last = ratings.len() - 1;
                Series {
                    ladder: ladder.clone(),
                    colour: COLOURS[n % COLOURS.len()],
                    points: points.join(" "),
                    end_x: format!("{:.1}", x(last)),
                    end_y: format!("{:.1}", y(ratings[last])),
                    summary: format!(
                        "{:.0} → {:.0} over {} rated match{}",
                        ratings[0],
                        ratings[last],
                        last,
                        if last == 1 { "" } else { "es" }
                    ),
                }
            })
            .collect();
        let description = lines
            .iter()
            .map(|s| format!("{}: {}", s.ladder, s.summary))
            .collect::<Vec<_>>()
            .join("; ");
        Some(Chart {
            width,
            height,
            series: lines,
            grid,
            matches: longest - 1,
            left,
            bottom,
            right,
            description: format!("Rating after each rated match. {description}."),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_chart_spans_its_ratings() {
        let chart = Chart::new(&[("othello:std".into(), vec![1500.0, 1550.0, 1620.0])]).expect("a chart");
        assert_eq!(chart.series.len(), 1);
        assert_eq!(chart.series[0].points.split(' ').count(), 3);
        assert!(chart.grid.iter().any(|g| g.label == "1500"));
        assert!(chart.description.contains("1500 → 1620 over 2 rated matches"));
        assert_eq!(chart.matches, 2);
        assert!(Chart::new(&[("othello:std".into(), vec![1500.0])]).is_none());
    }
}
