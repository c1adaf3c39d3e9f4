use super::*;
use crate::read::pager::Ask;
use crate::request::BoxFuture;
use proptest::prelude::*;
use std::sync::Mutex;
use std::time::Duration;

/// How the fake sources' items are keyed.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Shape {
    /// One string attribute.
    Str,
    /// One number attribute.
    Num,
    /// A number, then a string (a multi-attribute key).
    Pair,
}

/// The reference order of a key: what DynamoDB's order is for the shape.
type RefKey = (i64, String);

fn sort_names(shape: Shape) -> Vec<&'static str> {
    match shape {
        Shape::Str => vec!["S"],
        Shape::Num => vec!["N"],
        Shape::Pair => vec!["N", "S"],
    }
}

fn reference_key(shape: Shape, (n, s): &RefKey) -> RefKey {
    match shape {
        Shape::Str => (0, s.clone()),
        Shape::Num => (*n, String::new()),
        Shape::Pair => (*n, s.clone()),
    }
}

/// A sorted partition: its items (by reference key), which pass the server-side
/// filter, at most `max_per_request` items read per request (DynamoDB's 1 MB), and a delay
/// per request so that responses arrive in shuffled order.
struct Fake {
    id: usize,
    shape: Shape,
    keys: Vec<RefKey>,
    passes: Vec<bool>,
    reverse: bool,
    max_per_request: usize,
    delays: Vec<u64>,
    /// Each request's `Limit` and how many items the source had read before it.
    requests: Mutex<Vec<(Option<i32>, usize)>>,
    fail_at: Option<usize>,
}

fn n(i: usize) -> AttributeValue {
    AttributeValue::N(i.to_string())
}

impl Fake {
    fn item(&self, i: usize) -> Item {
        let (num, s) = &self.keys[i];
        let mut item = Item::from([("P".to_owned(), n(self.id)), ("I".to_owned(), n(i))]);
        if self.shape != Shape::Str {
            item.insert("N".into(), AttributeValue::N(num.to_string()));
        }
        if self.shape != Shape::Num {
            item.insert("S".into(), AttributeValue::S(s.clone()));
        }
        item
    }

    /// The indices in read order.
    fn order(&self) -> Vec<usize> {
        let mut order: Vec<usize> = (0..self.keys.len()).collect();
        if self.reverse {
            order.reverse();
        }
        order
    }
}

impl Source for Fake {
    fn fetch(&self, ask: Ask) -> BoxFuture<'_, Result<Response, Error>> {
        let order = self.order();
        let from = match &ask.start {
            None => 0,
            Some(key) => {
                let at: usize = key["I"].as_n().unwrap().parse().unwrap();
                order.iter().position(|&i| i == at).unwrap() + 1
            }
        };
        let number = {
            let mut requests = self.requests.lock().unwrap_or_else(|e| e.into_inner());
            requests.push((ask.limit, from));
            requests.len()
        };
        let limit = ask.limit.map_or(usize::MAX, |l| l as usize);
        let to = from
            .saturating_add(limit.min(self.max_per_request))
            .min(order.len());
        let read = &order[from..to];
        let items = read
            .iter()
            .filter(|&&i| self.passes[i])
            .map(|&i| self.item(i))
            .collect();
        let last_key = (to < order.len()).then(|| {
            let mut key = self.item(order[to - 1]);
            key.remove("P");
            key.insert("P".into(), n(self.id));
            key
        });
        let delay = self.delays[number % self.delays.len()];
        let fail = self.fail_at == Some(number);
        let evaluated = read.len();
        Box::pin(async move {
            tokio::time::sleep(Duration::from_millis(delay)).await;
            if fail {
                return Err(Error::UnexpectedResponse {
                    entity: "Fake",
                    operation: "Query",
                    message: "injected".into(),
                });
            }
            Ok(Response {
                evaluated,
                items,
                last_key,
                consumed: 0.5,
                estimated: 0.5,
            })
        })
    }
}

/// One read's sources and what they hold.
#[derive(Debug, Clone)]
struct Case {
    shape: Shape,
    /// Per source: its items' keys (sorted), whether each passes the filter.
    sources: Vec<Vec<(RefKey, bool)>>,
    reverse: bool,
    page_size: Option<usize>,
    max_per_request: usize,
    concurrency: usize,
    delays: Vec<u64>,
    /// Items whose index is a multiple of this are dropped client-side (`keep`).
    client_drop: usize,
}

impl Case {
    fn fakes(&self) -> Vec<Arc<Fake>> {
        self.sources
            .iter()
            .enumerate()
            .map(|(id, items)| {
                Arc::new(Fake {
                    id,
                    shape: self.shape,
                    keys: items.iter().map(|(k, _)| k.clone()).collect(),
                    passes: items.iter().map(|(_, p)| *p).collect(),
                    reverse: self.reverse,
                    max_per_request: self.max_per_request,
                    delays: self
                        .delays
                        .iter()
                        .map(|d| d * (id as u64 % 3 + 1))
                        .collect(),
                    requests: Mutex::new(Vec::new()),
                    fail_at: None,
                })
            })
            .collect()
    }

    /// The merged sequence: `(source, index)` in DynamoDB's order, ties by source.
    fn reference(&self) -> Vec<(usize, usize)> {
        let mut all: Vec<(RefKey, usize, usize)> = Vec::new();
        for (p, items) in self.sources.iter().enumerate() {
            for (i, (key, passes)) in items.iter().enumerate() {
                if *passes && i % self.client_drop != self.client_drop - 1 {
                    all.push((reference_key(self.shape, key), p, i));
                }
            }
        }
        all.sort();
        if self.reverse {
            all.reverse();
        }
        all.into_iter().map(|(_, p, i)| (p, i)).collect()
    }

    fn merge(
        &self,
        fakes: &[Arc<Fake>],
        positions: Vec<Position>,
        requests_per_source: Option<usize>,
    ) -> Merge<(usize, usize)> {
        let drop = self.client_drop;
        let keep: Keep<(usize, usize)> = Box::new(move |item: Item| {
            let number = |a: &str| -> usize { item[a].as_n().unwrap().parse().unwrap() };
            let (p, i) = (number("P"), number("I"));
            Ok((i % drop != drop - 1).then_some((p, i)))
        });
        let settings = Settings {
            target: "Fake",
            operation: "Query",
            sort_names: sort_names(self.shape),
            cursor_names: vec!["P", "I", "N", "S"],
            reverse: self.reverse,
            page_size: self.page_size,
            concurrency: self.concurrency,
            requests_per_source,
        };
        Merge::new(fakes.iter().cloned(), positions, settings, keep).expect("inside a runtime")
    }
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .start_paused(true)
        .build()
        .expect("a runtime")
}

/// Reads up to `limit` items (all without one) from `positions`.
async fn read(merge: &mut Merge<(usize, usize)>, limit: Option<usize>) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    while limit.is_none_or(|l| out.len() < l) {
        match merge.next(limit.map(|l| l - out.len())).await {
            Step::Item(item) => out.push(item.expect("no failure injected")),
            Step::End | Step::Stopped => break,
        }
    }
    out
}

fn shape() -> impl Strategy<Value = Shape> {
    prop_oneof![Just(Shape::Str), Just(Shape::Num), Just(Shape::Pair)]
}

/// Up to 8 sources of up to 25 items with keys from small ranges, so that equal keys
/// occur across sources and, for the pair shape, within one.
fn case() -> impl Strategy<Value = Case> {
    let key = (-4i64..4, "[ab]{0,2}|é|z");
    let source = prop::collection::vec((key, prop::bool::weighted(0.8)), 0..25);
    (
        shape(),
        prop::collection::vec(source, 1..9),
        any::<bool>(),
        prop::option::of(1usize..7),
        1usize..9,
        1usize..10,
        prop::collection::vec(0u64..20, 1..5),
        2usize..6,
    )
        .prop_map(
            |(
                shape,
                mut sources,
                reverse,
                page_size,
                max_per_request,
                concurrency,
                delays,
                drop,
            )| {
                for items in &mut sources {
                    items.sort_by(|a, b| {
                        reference_key(shape, &a.0).cmp(&reference_key(shape, &b.0))
                    });
                    // A partition's sort keys are unique (except on an index): keep
                    // duplicates only for the pair shape, standing for an index.
                    if shape != Shape::Pair {
                        items.dedup_by(|a, b| {
                            reference_key(shape, &a.0) == reference_key(shape, &b.0)
                        });
                    }
                }
                Case {
                    shape,
                    sources,
                    reverse,
                    page_size,
                    max_per_request,
                    concurrency,
                    delays,
                    client_drop: drop,
                }
            },
        )
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 200, ..ProptestConfig::default() })]

    /// The whole read is the reference sequence, whatever the page sizes, the order in
    /// which responses arrive and the concurrency.
    #[test]
    fn the_merge_is_the_sorted_union_of_the_sources(case in case()) {
        let fakes = case.fakes();
        let got = runtime().block_on(async {
            let mut merge = case.merge(&fakes, vec![Position::Start; fakes.len()], None);
            let got = read(&mut merge, None).await;
            prop_assert!(merge.exhausted());
            Ok(got)
        })?;
        prop_assert_eq!(got, case.reference());
    }

    /// A limit returns the first items of the reference, and no source asks for more
    /// items than could still be needed from it: without a filter or a page size, a
    /// request's `Limit` and the items its source read before add up to at most the
    /// limit.
    #[test]
    fn a_limit_returns_the_first_items_and_asks_for_no_more_than_needed(
        case in case(),
        limit in 1usize..30,
    ) {
        let mut case = case;
        case.page_size = None;
        for items in &mut case.sources {
            for (_, passes) in items.iter_mut() {
                *passes = true;
            }
        }
        case.client_drop = usize::MAX;
        let fakes = case.fakes();
        let got = runtime().block_on(async {
            let mut merge = case.merge(&fakes, vec![Position::Start; fakes.len()], None);
            read(&mut merge, Some(limit)).await
        });
        let expected: Vec<_> = case.reference().into_iter().take(limit).collect();
        prop_assert_eq!(got, expected);
        for fake in &fakes {
            for (asked, read_before) in fake.requests.lock().unwrap().iter() {
                let asked = asked.expect("a limit asks for a number of items") as usize;
                prop_assert!(
                    asked + read_before <= limit,
                    "source {} asked for {asked} after reading {read_before}, limit {limit}",
                    fake.id
                );
            }
        }
    }

    /// Page after page, each merge starting where the last one stood, gives exactly the
    /// reference sequence: with a limit, and without one (one request per source and
    /// page).
    #[test]
    fn pages_from_positions_give_the_reference_without_loss_or_duplicates(
        case in case(),
        limit in prop::option::of(1usize..7),
    ) {
        let fakes = case.fakes();
        let got = runtime().block_on(async {
            let mut positions = vec![Position::Start; fakes.len()];
            let mut got = Vec::new();
            let requests = || -> Vec<usize> {
                fakes.iter().map(|f| f.requests.lock().unwrap().len()).collect()
            };
            for _ in 0..1000 {
                let before = requests();
                let mut merge = case.merge(&fakes, positions, limit.is_none().then_some(1));
                let page = read(&mut merge, limit).await;
                match limit {
                    Some(l) => prop_assert!(page.len() <= l),
                    None => {
                        for (b, a) in before.iter().zip(requests()) {
                            prop_assert!(a - b <= 1, "a page without a limit reads a source once");
                        }
                    }
                }
                got.extend(page);
                if merge.exhausted() {
                    return Ok(got);
                }
                positions = merge.positions();
            }
            Err(TestCaseError::fail("more than 1000 pages"))
        })?;
        prop_assert_eq!(got, case.reference());
    }
}

fn skewed() -> Case {
    // Source 0 holds the 50 smallest keys; sources 1..8 interleave above them.
    let mut sources = vec![
        (0..50)
            .map(|i| ((i, String::new()), true))
            .collect::<Vec<_>>(),
    ];
    for p in 1..8 {
        sources.push(
            (0..50)
                .map(|i| ((1000 + 7 * i + p, String::new()), true))
                .collect(),
        );
    }
    Case {
        shape: Shape::Num,
        sources,
        reverse: false,
        page_size: Some(5),
        max_per_request: usize::MAX,
        concurrency: 16,
        delays: vec![1],
        client_drop: usize::MAX,
    }
}

#[test]
fn a_source_whose_next_item_cannot_be_among_the_limit_is_not_read_again() {
    let case = skewed();
    let fakes = case.fakes();
    let got = runtime().block_on(async {
        let mut merge = case.merge(&fakes, vec![Position::Start; fakes.len()], None);
        read(&mut merge, Some(20)).await
    });
    assert_eq!(got, (0..20).map(|i| (0, i)).collect::<Vec<_>>());
    let requests: Vec<usize> = fakes
        .iter()
        .map(|f| f.requests.lock().unwrap().len())
        .collect();
    // Source 0: the four responses of 5 that hold the 20 items; every other source: its
    // first response only (its items come after 35 others already read).
    assert_eq!(requests, [4, 1, 1, 1, 1, 1, 1, 1]);
}

#[test]
fn without_a_limit_each_source_reads_ahead_while_the_merge_returns_items() {
    // 8 sources of 3 responses each.
    let mut case = skewed();
    case.sources.truncate(8);
    for items in &mut case.sources {
        items.truncate(15);
    }
    case.delays = vec![10];
    let fakes = case.fakes();
    let rt = runtime();
    let elapsed = rt.block_on(async {
        let started = tokio::time::Instant::now();
        let mut merge = case.merge(&fakes, vec![Position::Start; fakes.len()], None);
        let got = read(&mut merge, None).await;
        assert_eq!(got, case.reference());
        started.elapsed()
    });
    // The fake's delays are 10, 20 or 30 ms by source: 3 rounds of the slowest is
    // 90 ms. Reading a source only when the merge waits for it takes 330 ms.
    assert!(elapsed <= Duration::from_millis(100), "{elapsed:?}");
}

#[test]
fn a_failed_request_ends_the_read_with_its_error() {
    let case = skewed();
    let mut fakes = case.fakes();
    if let Some(fake) = Arc::get_mut(&mut fakes[3]) {
        fake.fail_at = Some(1);
    }
    runtime().block_on(async {
        let mut merge = case.merge(&fakes, vec![Position::Start; fakes.len()], None);
        loop {
            match merge.next(None).await {
                Step::Item(Ok(_)) => {}
                Step::Item(Err(e)) => {
                    assert!(e.to_string().contains("injected"), "{e}");
                    break;
                }
                other => panic!("the read ended without its error: {other:?}"),
            }
        }
    });
}

#[test]
fn an_item_without_its_sort_key_is_an_unexpected_response() {
    let mut case = skewed();
    case.shape = Shape::Str; // the fake writes "N", the merge looks for "S"
    let fakes = case.fakes();
    let mut wrong = case.clone();
    wrong.shape = Shape::Num;
    let fakes_num = wrong.fakes();
    runtime().block_on(async {
        let mut merge = case.merge(&fakes_num, vec![Position::Start; fakes.len()], None);
        match merge.next(None).await {
            Step::Item(Err(Error::UnexpectedResponse { message, .. })) => {
                assert!(message.contains("sort-key"), "{message}")
            }
            other => panic!("expected an unexpected response, got {other:?}"),
        }
    });
}

#[test]
fn outside_a_tokio_runtime_a_merge_is_refused() {
    let case = skewed();
    let fakes = case.fakes();
    let keep: Keep<()> = Box::new(|_| Ok(None));
    let settings = Settings {
        target: "Fake",
        operation: "Query",
        sort_names: vec!["N"],
        cursor_names: vec![],
        reverse: false,
        page_size: None,
        concurrency: 1,
        requests_per_source: None,
    };
    let start = vec![Position::Start; fakes.len()];
    match Merge::new(fakes.iter().cloned(), start, settings, keep) {
        Err(Error::Validation { reason, .. }) => {
            assert_eq!(reason, crate::ValidationReason::InvalidOption)
        }
        Err(other) => panic!("{other}"),
        Ok(_) => panic!("a merge outside a runtime"),
    }
}

#[test]
fn numbers_compare_by_value_in_every_form_dynamodb_accepts() {
    let ascending = [
        "-1e126", "-100", "-9.5", "-1", "-0.001", "0", "1e-130", "0.0001", "0.5", "1", "1.5",
        "9.999", "10", "99", "100", "1e126",
    ];
    for (i, a) in ascending.iter().enumerate() {
        for (j, b) in ascending.iter().enumerate() {
            assert_eq!(compare_numbers(a, b), i.cmp(&j), "{a} vs {b}");
        }
    }
    for equal in [
        ["1", "1.0"],
        ["1", "10e-1"],
        ["100", "1E2"],
        ["0", "-0"],
        ["0", "0.000"],
        ["-2.5", "-25e-1"],
        ["7", "+7"],
        ["0.5", ".5"],
    ] {
        assert_eq!(
            compare_numbers(equal[0], equal[1]),
            Ordering::Equal,
            "{equal:?}"
        );
    }
    // Text that is not a number sorts after every number, and never panics.
    for text in [
        "",
        "-",
        ".",
        "e5",
        "1e",
        "1.2.3",
        "abc",
        "1e99999999999999999999",
    ] {
        assert_eq!(compare_numbers("5", text), Ordering::Less, "{text:?}");
    }
}

proptest! {
    #[test]
    fn numbers_compare_like_integers_whatever_their_form(
        a in any::<i64>(),
        b in any::<i64>(),
        shift_a in 0u32..5,
        shift_b in 0u32..5,
    ) {
        // `a` written as a × 10^shift × 10^-shift, e.g. 12 as "1200e-2".
        let form = |n: i64, shift: u32| format!("{}e-{shift}", i128::from(n) * 10i128.pow(shift));
        prop_assert_eq!(compare_numbers(&form(a, shift_a), &form(b, shift_b)), a.cmp(&b));
        prop_assert_eq!(compare_numbers(&a.to_string(), &b.to_string()), a.cmp(&b));
    }

    #[test]
    fn numbers_with_fractions_compare_like_their_values(a in -1e6f64..1e6, b in -1e6f64..1e6) {
        let (x, y) = (format!("{a:.3}"), format!("{b:.3}"));
        let (xv, yv): (f64, f64) = (x.parse().unwrap(), y.parse().unwrap());
        prop_assert_eq!(compare_numbers(&x, &y), xv.partial_cmp(&yv).unwrap());
    }

    #[test]
    fn comparing_arbitrary_text_as_numbers_never_panics(a in "\\PC{0,12}", b in "[-+0-9.eE]{0,12}") {
        let _ = compare_numbers(&a, &b);
        prop_assert_eq!(compare_numbers(&b, &b), Ordering::Equal);
    }
}
