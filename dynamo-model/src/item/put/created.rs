//! A put keeps the creation time stored (`#[dynamo(created)]`, see [`crate::auto`]): its
//! condition also holds only where no creation time is stored or the stored one is the
//! put's own. A put that fails on that alone is sent again with the stored time, so an
//! overwrite never changes it, whatever time the value held; a transaction's put, which
//! cannot be sent again, fails instead.

use super::{Put, ReadyPut, Sent};
use crate::{Entity, Error, Item};
use aws_sdk_dynamodb::types::AttributeValue;
use std::collections::HashMap;

/// The guard's placeholders, apart from the `#nN` and `:vN` the renderer makes.
const NAME: &str = "#created";
const VALUE: &str = ":created";

/// How often a put is sent again with the stored creation time, which another writer
/// may change in between (a delete and a new create).
const ATTEMPTS: usize = 3;

impl<E: Entity> Put<E> {
    /// The creation-time attribute the put must keep: not for a put that creates only
    /// (`if_absent`, or version 0 of a versioned entity).
    pub(super) fn kept_created(&self) -> Option<&'static str> {
        let creates = self.if_absent || (E::VERSION.is_some() && self.version == 0);
        E::__STAMPS.created.filter(|_| !creates)
    }
}

/// Appends the guard keeping the stored creation time in `attribute` to `condition`,
/// with the put's own time `ours` (none: a value no stored time equals).
pub(super) fn guard(
    attribute: &'static str,
    ours: Option<&AttributeValue>,
    condition: &mut String,
    names: &mut Option<HashMap<String, String>>,
    values: &mut Option<HashMap<String, AttributeValue>>,
) {
    *condition = format!("({condition}) AND (attribute_not_exists({NAME}) OR {NAME} = {VALUE})");
    names
        .get_or_insert_with(HashMap::new)
        .insert(NAME.to_owned(), attribute.to_owned());
    // A stored creation time is never NULL (an absent `Option` writes no attribute).
    let ours = ours.cloned().unwrap_or(AttributeValue::Null(true));
    values
        .get_or_insert_with(HashMap::new)
        .insert(VALUE.to_owned(), ours);
}

/// Sets the creation time the guard of a prepared put compares with (a put of an entity
/// with unique values takes the stored one before it sends its transaction).
pub(super) fn set_guard_value(write: &mut crate::item::PreparedWrite, time: AttributeValue) {
    if let Some(values) = write.values.as_mut().filter(|v| v.contains_key(VALUE)) {
        values.insert(VALUE.to_owned(), time);
    }
}

impl<E: Entity> ReadyPut<E> {
    /// Sends the put; one that failed only because the item under its key holds another
    /// creation time is sent again with that time.
    pub(super) async fn send_keeping_created(self) -> Result<Sent, Error> {
        let Some(attribute) = self.kept_created else {
            return self.send().await;
        };
        let mut ready = self;
        for _ in 1..ATTEMPTS {
            let again = ready.duplicate();
            let result = ready.send().await;
            let stored = match &result {
                Err(Error::ConditionFailed {
                    current: Some(item),
                    ..
                }) => other_time(item, again.request.get_item().as_ref(), attribute),
                _ => None,
            };
            match stored {
                Some(stored) => ready = again.with_created(attribute, stored),
                None => return result,
            }
        }
        ready.send().await
    }

    /// The same request, to send again.
    fn duplicate(&self) -> Self {
        ReadyPut {
            db: self.db.clone(),
            token: self.token.clone(),
            request: self.request.clone(),
            failure: self.failure.clone(),
            timeout: self.timeout,
            kept_created: self.kept_created,
            _entity: std::marker::PhantomData,
        }
    }

    /// The request with creation time `stored`, in its item and its guard.
    fn with_created(mut self, attribute: &'static str, stored: AttributeValue) -> Self {
        self.request = self
            .request
            .item(attribute, stored.clone())
            .expression_attribute_values(VALUE, stored);
        self
    }
}

/// The creation time `current` holds when it is not the one `sent` holds: what the put
/// must write instead.
fn other_time(current: &Item, sent: Option<&Item>, attribute: &str) -> Option<AttributeValue> {
    let stored = current.get(attribute)?;
    let ours = sent.and_then(|item| item.get(attribute));
    (Some(stored) != ours).then(|| stored.clone())
}
