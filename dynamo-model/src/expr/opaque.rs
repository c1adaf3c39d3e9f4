//! What the typed paths of fields whose stored bytes are not the value (compressed,
//! encrypted) share: `exists` and `not_exists` in conditions, `set` and `remove` in
//! updates, and every comparison a compile error naming why.

/// For path type `$path` (fields `name`, `_marker`, and whatever `$encode` reads):
/// `Clone`, `Copy`, `exists`, `not_exists`, a comparison method for every comparison a
/// plain path has, bound by `$never` (a trait no type implements, whose diagnostic says
/// why the comparison is refused), and `SettablePath` for values `V: $bound`, encoded by
/// `$encode(path, value)`.
macro_rules! opaque_path {
    ($path:ident: $never:ident, V: $bound:path, $encode:expr) => {
        impl<E, V> Clone for $path<E, V> {
            fn clone(&self) -> Self {
                *self
            }
        }

        impl<E, V> Copy for $path<E, V> {}

        impl<E, V> $path<E, V> {
            /// `attribute_exists(path)`
            pub fn exists(self) -> $crate::expr::Condition<E> {
                let path = $crate::expr::AttrPath::Top(self.name);
                $crate::expr::Condition::function("attribute_exists", path)
            }

            /// `attribute_not_exists(path)`
            pub fn not_exists(self) -> $crate::expr::Condition<E> {
                let path = $crate::expr::AttrPath::Top(self.name);
                $crate::expr::Condition::function("attribute_not_exists", path)
            }
        }

        $crate::expr::opaque::opaque_path!(@never $path, $never,
            eq(value), ne(value), lt(value), le(value), gt(value), ge(value),
            between(low, high), is_in(values), begins_with(prefix), contains(value), size());

        impl<E, V> $crate::sealed::SettablePath for $path<E, V> {}

        impl<E, V: $bound> $crate::expr::SettablePath<E, V> for $path<E, V> {
            fn attribute(&self) -> $crate::expr::AttrPath {
                $crate::expr::AttrPath::Top(self.name)
            }

            fn __encode(
                &self,
                value: &V,
            ) -> Result<Option<aws_sdk_dynamodb::types::AttributeValue>, $crate::codec::EncodeError>
            {
                let encode: fn(&Self, &V) -> _ = $encode;
                encode(self, value)
            }
        }
    };
    (@never $path:ident, $never:ident, $($name:ident($($arg:ident),*)),*) => {
        impl<E, V> $path<E, V> {
            $(
                #[doc(hidden)]
                #[allow(unreachable_code)]
                pub fn $name<T>(self, $($arg: T),*) -> $crate::expr::Condition<E>
                where
                    Self: $never,
                {
                    let _ = ($($arg),*);
                    match self.__never() {}
                }
            )*
        }
    };
}
pub(crate) use opaque_path;
