//! A formatted field's own attribute: the value in its format's [`AttributeForm`], for a
//! field that is present ([`Formatted`]) or may be absent ([`FormattedOption`]).

use super::*;

/// The field's plain attribute in the format's [`AttributeForm`]: what a formatted
/// field's attribute, conditions and updates on it, and a multi-attribute index key of it
/// hold.
impl<T: AttrValue, F: KeyFormat<T>> AttrValue for Formatted<T, F> {
    #[doc(hidden)]
    const __DYNAMO_TYPE: Option<&'static str> = match F::ATTRIBUTE {
        AttributeForm::Own => T::__DYNAMO_TYPE,
        AttributeForm::Text => Some("S"),
        AttributeForm::Number => Some("N"),
    };

    // The type's own attribute keeps its order; the key text only when the format says so.
    #[doc(hidden)]
    const __ORDERED: bool = match F::ATTRIBUTE {
        AttributeForm::Own => T::__ORDERED,
        AttributeForm::Text | AttributeForm::Number => F::ORDERED,
    };

    fn to_attr(&self) -> Result<AttributeValue, EncodeError> {
        attribute::<T, F>(&self.value)
    }

    fn to_attr_opt(&self) -> Result<Option<AttributeValue>, EncodeError> {
        attribute_opt::<T, F>(&self.value)
    }

    /// Reads the attribute in the declared form; an attribute in the field type's own
    /// encoding (what versions before attribute forms wrote) is read too.
    fn from_attr(value: AttributeValue) -> Result<Self, DecodeErrorKind> {
        let text = match (F::ATTRIBUTE, &value) {
            (AttributeForm::Text, AttributeValue::S(text))
            | (AttributeForm::Number, AttributeValue::N(text)) => text,
            _ => return T::from_attr(value).map(Formatted::new),
        };
        match F::decode(text) {
            Ok(decoded) => Ok(Formatted::new(decoded)),
            Err(e) => T::from_attr(value)
                .map(Formatted::new)
                .map_err(|_| DecodeErrorKind::Invalid(e.to_string())),
        }
    }

    fn from_missing() -> Result<Self, DecodeErrorKind> {
        T::from_missing().map(Formatted::new)
    }
}

fn attribute<T: AttrValue, F: KeyFormat<T>>(value: &T) -> Result<AttributeValue, EncodeError> {
    let form = F::ATTRIBUTE;
    if form == AttributeForm::Own {
        return value.to_attr();
    }
    let mut text = String::new();
    F::encode(value, &mut text).map_err(|e| EncodeError::key_format(&e))?;
    if form == AttributeForm::Number {
        crate::codec::check_number(&text)?;
        return Ok(AttributeValue::N(text));
    }
    Ok(AttributeValue::S(text))
}

fn attribute_opt<T: AttrValue, F: KeyFormat<T>>(
    value: &T,
) -> Result<Option<AttributeValue>, EncodeError> {
    match F::ATTRIBUTE {
        AttributeForm::Own => value.to_attr_opt(),
        _ => attribute::<T, F>(value).map(Some),
    }
}

/// The attribute type of a formatted field (`Formatted<T, F>`, or `FormattedOption<T, F>`
/// for an optional field), for generated code: how it is written from, and read back into, the
/// field's own type.
#[doc(hidden)]
pub trait FormattedAttr: AttrValue {
    /// The field's type.
    type Plain;
    /// Encodes the field's value (`None`: no attribute).
    fn put_plain(plain: &Self::Plain) -> Result<Option<AttributeValue>, EncodeError>;
    /// The field's value.
    fn unformat(self) -> Self::Plain;
    /// The attribute type's value.
    fn from_plain(plain: Self::Plain) -> Self;
    /// The format's [`KeyFormat::RESOLUTION_NANOS`].
    #[doc(hidden)]
    const RESOLUTION_NANOS: u64;
}

impl<T: AttrValue, F: KeyFormat<T>> FormattedAttr for Formatted<T, F> {
    type Plain = T;
    const RESOLUTION_NANOS: u64 = F::RESOLUTION_NANOS;
    fn put_plain(plain: &T) -> Result<Option<AttributeValue>, EncodeError> {
        attribute_opt::<T, F>(plain)
    }
    fn unformat(self) -> T {
        self.value
    }
    fn from_plain(plain: T) -> Self {
        Formatted::new(plain)
    }
}

/// An optional value of type `T` whose attribute is in format `F` (see the [module](super)
/// docs): the value type of the path of an `Option<T>` field with a key format, so
/// conditions and updates on it take an `Option<T>` and write the format's attribute.
pub struct FormattedOption<T, F> {
    value: Option<T>,
    format: PhantomData<fn() -> F>,
}

impl<T, F> FormattedOption<T, F> {
    /// Wraps `value`.
    pub const fn new(value: Option<T>) -> Self {
        FormattedOption {
            value,
            format: PhantomData,
        }
    }

    /// The value.
    pub fn into_inner(self) -> Option<T> {
        self.value
    }
}

value_traits!(FormattedOption);

/// An absent value is no attribute; a present one is [`Formatted`]'s attribute.
impl<T: AttrValue, F: KeyFormat<T>> AttrValue for FormattedOption<T, F> {
    #[doc(hidden)]
    const __DYNAMO_TYPE: Option<&'static str> = match F::ATTRIBUTE {
        AttributeForm::Own => T::__DYNAMO_TYPE,
        AttributeForm::Text => Some("S"),
        AttributeForm::Number => Some("N"),
    };

    fn to_attr(&self) -> Result<AttributeValue, EncodeError> {
        match &self.value {
            Some(value) => attribute::<T, F>(value),
            None => Ok(AttributeValue::Null(true)),
        }
    }

    fn to_attr_opt(&self) -> Result<Option<AttributeValue>, EncodeError> {
        match &self.value {
            Some(value) => attribute_opt::<T, F>(value),
            None => Ok(None),
        }
    }

    fn from_attr(value: AttributeValue) -> Result<Self, DecodeErrorKind> {
        match value {
            AttributeValue::Null(_) => Ok(FormattedOption::new(None)),
            other => {
                Formatted::<T, F>::from_attr(other).map(|v| FormattedOption::new(Some(v.value)))
            }
        }
    }

    fn from_missing() -> Result<Self, DecodeErrorKind> {
        Ok(FormattedOption::new(None))
    }
}

impl<T: AttrValue, F: KeyFormat<T>> FormattedAttr for FormattedOption<T, F> {
    type Plain = Option<T>;
    const RESOLUTION_NANOS: u64 = F::RESOLUTION_NANOS;
    fn put_plain(plain: &Option<T>) -> Result<Option<AttributeValue>, EncodeError> {
        match plain {
            Some(value) => attribute_opt::<T, F>(value),
            None => Ok(None),
        }
    }
    fn unformat(self) -> Option<T> {
        self.value
    }
    fn from_plain(plain: Option<T>) -> Self {
        FormattedOption::new(plain)
    }
}
