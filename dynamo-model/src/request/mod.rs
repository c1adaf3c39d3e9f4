//! What every request shares: the SDK request behind each operation (what `params()`
//! shows and `customize()` adjusts), the boxed future the builders return, and pages.
//!
//! The SDK request behind every operation: what `params()` shows and `customize()` adjusts.
//!
//! Each operation renders its request into the SDK's fluent builder (`PutItemFluentBuilder`,
//! `QueryFluentBuilder`, ...) in one place. Sending calls `.send()` on that builder;
//! `params()` returns the input the builder holds (`PutItemInput`, ...) without sending it;
//! a `customize` hook receives the builder after the crate has filled it and returns it,
//! adjusted, before either. So what `params()` shows is exactly what would be sent, hook
//! included.

pub(crate) mod exec;
pub(crate) mod page;
mod watch;

use crate::Error;
use std::sync::Arc;

/// Boxed future returned by the builders' `IntoFuture` implementations.
pub type BoxFuture<'a, T> = std::pin::Pin<Box<dyn std::future::Future<Output = T> + Send + 'a>>;

/// A caller's adjustment of an SDK request builder `B`, applied every time the operation
/// builds the request (each request of a query, each chunk and retry of a batch).
pub(crate) struct Customize<B>(Option<Arc<dyn Fn(B) -> B + Send + Sync>>);

impl<B> Default for Customize<B> {
    fn default() -> Self {
        Customize(None)
    }
}

impl<B> Clone for Customize<B> {
    fn clone(&self) -> Self {
        Customize(self.0.clone())
    }
}

impl<B: 'static> Customize<B> {
    /// Adds `hook` after the hooks set so far.
    pub(crate) fn then(self, hook: impl Fn(B) -> B + Send + Sync + 'static) -> Self {
        Customize(Some(match self.0 {
            None => Arc::new(hook),
            Some(first) => Arc::new(move |b| hook(first(b))),
        }))
    }

    /// Whether a hook is set.
    #[cfg_attr(not(feature = "cache"), allow(dead_code))]
    pub(crate) fn is_set(&self) -> bool {
        self.0.is_some()
    }

    /// The builder after every hook.
    pub(crate) fn apply(&self, builder: B) -> B {
        match &self.0 {
            Some(hook) => hook(builder),
            None => builder,
        }
    }
}

/// The input an SDK fluent builder holds, as `params()` returns it. The SDK's input
/// builders report a [`BuildError`](aws_sdk_dynamodb::error::BuildError) as
/// [`ValidationReason::RequestBuild`](crate::ValidationReason).
pub(crate) fn input<I>(
    operation: &'static str,
    built: Result<I, aws_sdk_dynamodb::error::BuildError>,
) -> Result<I, Error> {
    built.map_err(|e| Error::request_build(operation, e))
}

/// What the `Db` observed of its reads, for an [`Explain`](crate::insight::Explain): those
/// of the [`Insight`](crate::insight::Insight) attached with
/// [`Db::observed`](crate::Db::observed), if any.
pub(crate) fn observations<T: crate::Table>(
    db: &crate::Db<T>,
) -> Option<&dyn crate::insight::explain::Observations> {
    db.insight()
        .map(|insight| insight as &dyn crate::insight::explain::Observations)
}

/// Adds `customize()` to a builder with a `customize: Customize<$fluent>` field:
/// `customizable!(impl[E: Entity] Get<E>, GetItemFluentBuilder,
/// "before it is sent", "guarantees sentence")`; a single-item write says
/// `customizable!(impl[E: Entity] Put<E>, PutItemFluentBuilder, write -> ())` and is also
/// sent by awaiting it (`into_future!`).
macro_rules! customizable {
    // A single-item write (put, update, delete), sent by awaiting it.
    (impl[$($generics:tt)*] $builder:ty, $fluent:ty, write -> $output:ty) => {
        $crate::request::customizable!(
            impl[$($generics)*] $builder,
            $fluent,
            "before it is sent",
            "A hook that changes the key, the expressions or their placeholders takes the request out of the crate's guarantees (entity-type checks, write tokens, optimistic locking)."
        );
        $crate::request::into_future!(impl[$($generics)*] $builder, $output);
    };
    (impl[$($generics:tt)*] $builder:ty, $fluent:ty, $when:literal, $guarantees:literal) => {
        impl<$($generics)*> $builder {
            #[doc = concat!(
                "Adjusts the SDK request ", $when, ": `hook` receives the [`", stringify!($fluent),
                "`] as the crate built it and returns it. Hooks run in the order they were \
                 added, also when [`params`](Self::params) renders the request.\n\n\
                 Use it for request members the crate does not set (e.g. \
                 `return_consumed_capacity`). The hook sees the request's input members only: \
                 per-request SDK configuration (timeouts, retries, interceptors) belongs on \
                 the client given to the [`Db`](crate::Db). ",
                $guarantees
            )]
            pub fn customize(
                mut self,
                hook: impl Fn($fluent) -> $fluent + Send + Sync + 'static,
            ) -> Self {
                self.customize = self.customize.then(hook);
                self
            }
        }
    };
}
pub(crate) use customizable;

/// Implements `IntoFuture` for a builder with an `async fn send(self)` that returns
/// `Result<$output, Error>`: awaiting the builder sends it.
macro_rules! into_future {
    (impl[$($generics:tt)*] $builder:ty, $output:ty) => {
        impl<$($generics)*> ::std::future::IntoFuture for $builder {
            type Output = Result<$output, $crate::Error>;
            type IntoFuture = $crate::request::BoxFuture<'static, Self::Output>;
            fn into_future(self) -> Self::IntoFuture {
                Box::pin(self.send())
            }
        }
    };
}
pub(crate) use into_future;

#[cfg(test)]
mod tests {
    use super::Customize;

    #[test]
    fn hooks_run_in_the_order_they_were_added_every_time() {
        let hooks = Customize::<String>::default()
            .then(|s| s + "a")
            .then(|s| s + "b");
        assert_eq!(hooks.apply(String::new()), "ab");
        assert_eq!(hooks.clone().apply("x".into()), "xab");
        assert_eq!(Customize::<String>::default().apply("y".into()), "y");
    }
}
