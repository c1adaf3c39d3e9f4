//! [`Operand`]: the values a path of type `V` takes in conditions, filters, key conditions
//! and updates.

/// A value a field of type `V` is compared with or set to: the plain `V`, a `&V`, a `&str`
/// for a `String`, the inner value of an `Option`, the plain value of a field with a key
/// format, and, for a float, the integers it holds exactly.
///
/// Each integer type takes only itself, so an integer literal takes the field's type:
/// `f.item_count.ge(1)` on a `u32` field is a `u32` comparison, and a literal that does
/// not fit the field is a compile error (`-1` on a `u32`: `u32` has no negation; `300` on
/// a `u8`: the deny-by-default `overflowing_literals` lint). A value of another integer
/// type is converted by the caller (`u64::from(n)`, `u8::try_from(n)?`), where a lossy
/// conversion shows.
///
/// ```
/// use dynamo_model::Operand;
/// fn takes<V>(value: impl Operand<V>) -> V { value.into_operand() }
///
/// let count: u32 = takes(1);          // the literal is a u32
/// let small: u8 = takes(255);
/// let name: String = takes("ada");    // &str for a String
/// let maybe: Option<u64> = takes(7);  // the inner value of an Option
/// let price: f64 = takes(3);          // an integer a float holds exactly
/// # assert_eq!((count, small, name.as_str(), maybe, price), (1, 255, "ada", Some(7), 3.0));
/// ```
///
/// A literal that does not fit is refused by the compiler:
///
/// ```compile_fail
/// use dynamo_model::Operand;
/// fn takes<V>(value: impl Operand<V>) -> V { value.into_operand() }
/// let count: u32 = takes(-1);
/// ```
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a value of a field of type `{V}`",
    label = "expected a `{V}` (or a reference to one)",
    note = "a field takes its own type, a reference to it, a `&str` for a `String`, the inner value of an `Option`, or the plain value of a formatted field; convert other types first (e.g. `u64::from(n)`)"
)]
pub trait Operand<V> {
    /// The value as the field's type.
    fn into_operand(self) -> V;
}

impl<V> Operand<V> for V {
    #[inline]
    fn into_operand(self) -> V {
        self
    }
}

impl<V: Clone> Operand<V> for &V {
    #[inline]
    fn into_operand(self) -> V {
        self.clone()
    }
}

/// The inner value of an optional field (`Some(value)`).
impl<T> Operand<Option<T>> for T {
    #[inline]
    fn into_operand(self) -> Option<T> {
        Some(self)
    }
}

impl<T: Clone> Operand<Option<T>> for &T {
    #[inline]
    fn into_operand(self) -> Option<T> {
        Some(self.clone())
    }
}

impl Operand<String> for &str {
    #[inline]
    fn into_operand(self) -> String {
        self.to_owned()
    }
}

impl Operand<Option<String>> for &str {
    #[inline]
    fn into_operand(self) -> Option<String> {
        Some(self.to_owned())
    }
}

/// The values a float holds exactly (the standard library's lossless `From`s), so an
/// integer literal is a float field's operand too.
macro_rules! exact_floats {
    ($float:ty: $($t:ty),*) => {$(
        impl Operand<$float> for $t {
            #[inline]
            fn into_operand(self) -> $float {
                <$float>::from(self)
            }
        }
    )*};
}
exact_floats!(f64: i8, i16, i32, u8, u16, u32, f32);
exact_floats!(f32: i8, i16, u8, u16);

/// A field stored through serde (`#[dynamo(serde)]`) takes its plain value.
impl<T> Operand<super::Serde<T>> for T {
    #[inline]
    fn into_operand(self) -> super::Serde<T> {
        super::Serde(self)
    }
}

impl<T> Operand<Box<T>> for T {
    #[inline]
    fn into_operand(self) -> Box<T> {
        Box::new(self)
    }
}

/// Epoch seconds.
impl Operand<super::Epoch> for i64 {
    #[inline]
    fn into_operand(self) -> super::Epoch {
        super::Epoch::from(self)
    }
}

#[cfg(feature = "time")]
impl Operand<super::Epoch> for time::OffsetDateTime {
    #[inline]
    fn into_operand(self) -> super::Epoch {
        super::Epoch::from(self)
    }
}

/// Number types that `ADD` can increment and a sum computes (also through `Option`, since `ADD` on a
/// missing attribute starts from zero). Sealed: implemented by the crate only.
pub trait Numeric: super::AttrValue + crate::sealed::Numeric {
    /// The type of the increment.
    type Delta: super::AttrValue;
}

macro_rules! numeric {
    ($($t:ty),*) => {$(
        impl Numeric for $t { type Delta = $t; }
        impl crate::sealed::Numeric for $t {}
    )*};
}
numeric!(
    u8, u16, u32, u64, u128, usize, i8, i16, i32, i64, i128, isize, f32, f64
);

impl<T: Numeric> Numeric for Option<T> {
    type Delta = T::Delta;
}
impl<T: Numeric> crate::sealed::Numeric for Option<T> {}
