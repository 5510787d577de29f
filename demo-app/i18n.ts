/**
 * The demo's two languages, English and French, chosen per request by `Accept-Language`. The
 * demo's own pages read `DemoTexts`; the kit's pages get `demoKitMessages` (the kit's messages
 * option: English extended, French complete), so every page a user sees is in one language.
 */
import type { Request } from 'express';
import type { KitMessages, KitMessagesInput } from 'hosted-sms-verify-kit';

export const DEMO_LOCALES = ['en', 'fr'] as const;
export type DemoLocale = (typeof DEMO_LOCALES)[number];

/** The best `Accept-Language` match; English when none. */
export function demoLocale(req: Request): DemoLocale {
  const match = req.acceptsLanguages([...DEMO_LOCALES]);
  return match === 'fr' ? 'fr' : 'en';
}

export interface DemoTexts {
  lang: DemoLocale;
  brandTagline: string;
  footer: string;
  nav: { label: string; home: string; activity: string; verifications: string };
  signedInAs: string;
  signOut: string;
  backHome: string;
  signin: {
    title: string;
    heading: string;
    lead: string;
    button: string;
    buttonLabel: (name: string) => string;
    pickUser: string;
    note: string;
  };
  home: {
    title: string;
    welcome: (firstName: string) => string;
    lead: string;
    phone: string;
    verified: string;
    notVerified: string;
    confirmedAt: (when: string) => string;
    confirmHint: string;
    confirm: string;
    confirmAgain: string;
    payout: string;
    sensitive: string;
    none: string;
    addHint: string;
    changedAt: (when: string) => string;
    newAccount: string;
    accountHint: string;
    accountExample: string;
    changePayout: string;
    codesGoTo: string;
    activityNote: string;
  };
  activity: {
    title: string;
    lead: string;
    empty: string;
    emptyLink: string;
    caption: string;
    when: string;
    action: string;
    details: string;
    session: string;
    emailsTitle: string;
    emailsLead: string;
    noEmails: string;
  };
  actionLabels: Record<string, string>;
  verifications: {
    title: string;
    lead: string;
    empty: string;
    started: string;
    action: string;
    outcome: string;
    settledBy: string;
    number: string;
    removed: string;
    outcomes: Record<'pending' | 'fulfilled' | 'failed' | 'expired' | 'superseded', string>;
    sources: Record<string, string>;
    justNow: string;
    minutesAgo: (n: number) => string;
    hoursAgo: (n: number) => string;
    daysAgo: (n: number) => string;
  };
  verified: {
    phoneTitle: string;
    phoneText: (phone: string) => string;
    payoutTitle: string;
    payoutText: (last4: string) => string;
    payoutUpdated: string;
    change: string;
    when: string;
    session: string;
    viewActivity: string;
  };
  errors: {
    signinRefused: { title: string; message: string };
    signoutRefused: { title: string; message: string };
    notFound: { title: string; message: string };
    badRequest: { title: string; message: string };
    server: { title: string; message: string };
  };
  kit: {
    processedTitle: string;
    processedText: string;
    goToSignIn: string;
    errorTitle: string;
    clientErrorHeading: string;
    serverErrorHeading: string;
  };
  /** Texts of the demo's `prepare` refusals (shown as written by the kit). */
  account: { missing: string; tooLong: string; digits: string; same: string };
}

const en: DemoTexts = {
  lang: 'en',
  brandTagline: 'hosted SMS verification',
  footer: 'A reference integrator for the hosted SMS verification kit. Demo data only.',
  nav: { label: 'Main', home: 'Home', activity: 'Activity', verifications: 'Verifications' },
  signedInAs: 'Signed in as',
  signOut: 'Sign out',
  backHome: 'Back to home',
  signin: {
    title: 'Sign in',
    heading: 'Sign in to the demo',
    lead:
      'Pick a demo user. Each has a phone number on file; the SMS code goes to that number ' +
      "(read it from the emulator's inbox).",
    button: 'Sign in',
    buttonLabel: (name) => `Sign in as ${name}`,
    pickUser: 'Pick one of the demo users.',
    note:
      'Sign-in here is deliberately passwordless: the demo is about what happens after sign-in, when an action needs ' +
      'a fresh SMS verification.',
  },
  home: {
    title: 'Home',
    welcome: (first) => `Welcome back, ${first}`,
    lead:
      'Both actions below are confirmed with a one-time code sent by SMS to your phone, ' +
      "on the verification service's own page.",
    phone: 'Phone number',
    verified: '✓ Verified',
    notVerified: 'Not verified',
    confirmedAt: (when) => `Confirmed ${when}.`,
    confirmHint: 'Confirm you can receive texts at this number.',
    confirm: 'Confirm your phone number',
    confirmAgain: 'Confirm it again',
    payout: 'Payout account',
    sensitive: 'Sensitive',
    none: 'None yet',
    addHint: 'Add the account your payouts go to.',
    changedAt: (when) => `Changed ${when}.`,
    newAccount: 'New account number',
    accountHint: '8 to 17 digits. Applied only after you confirm with an SMS code.',
    accountExample: 'e.g. 0123 4567 8901',
    changePayout: 'Change payout account',
    codesGoTo: 'Codes go to',
    activityNote: 'With the bundled emulator, read them in its inbox. Your completed verifications are listed under',
  },
  activity: {
    title: 'Activity',
    lead:
      'Every action below ran exactly once, in the same database transaction that marked its verification session ' +
      'fulfilled.',
    empty: 'Nothing yet. Confirm your phone number or change your payout account from',
    emptyLink: 'Home',
    caption: 'Fulfilled actions, newest first',
    when: 'When',
    action: 'Action',
    details: 'Details',
    session: 'Verification session',
    emailsTitle: 'Emails sent',
    emailsLead:
      "Sent after each outcome by the kit's onOutcome hook, outside the transaction (at least once; one per outcome).",
    noEmails: 'No emails yet.',
  },
  actionLabels: { confirm_phone: 'Confirmed phone number', change_payout: 'Changed payout account' },
  verifications: {
    title: 'Verifications',
    lead:
      'Every verification you started, newest first, as the kit keeps it: the number is masked, and ' +
      'after 30 days the details of a finished verification are removed.',
    empty: 'No verifications yet.',
    started: 'Started',
    action: 'Action',
    outcome: 'Outcome',
    settledBy: 'Settled by',
    number: 'Number',
    removed: 'removed',
    outcomes: {
      pending: 'Waiting for the code',
      fulfilled: 'Verified and applied',
      failed: 'Not verified',
      expired: 'Expired',
      superseded: 'Replaced by a newer request',
    },
    sources: { landing: 'you came back to the site', mobile: 'the mobile app', sweep: 'the background check' },
    justNow: 'just now',
    minutesAgo: (n) => `${n} min ago`,
    hoursAgo: (n) => `${n} h ago`,
    daysAgo: (n) => `${n} days ago`,
  },
  verified: {
    phoneTitle: 'Phone number confirmed',
    phoneText: (phone) => `You confirmed that ${phone} is yours.`,
    payoutTitle: 'Payout account changed',
    payoutText: (last4) => `Payouts now go to the account ending ${last4}.`,
    payoutUpdated: 'Your payout account was updated.',
    change: 'Change',
    when: 'When',
    session: 'Session',
    viewActivity: 'View activity',
  },
  errors: {
    signinRefused: {
      title: 'Sign-in refused',
      message: 'The sign-in form expired or came from another site. Open the sign-in page and try again.',
    },
    signoutRefused: { title: 'Sign-out refused', message: 'The form expired; go back and try again.' },
    notFound: { title: 'Page not found', message: 'There is nothing at this address.' },
    badRequest: { title: 'That request could not be read', message: 'Go back and try again.' },
    server: { title: 'Something went wrong', message: 'Nothing was changed. Please try again in a moment.' },
  },
  kit: {
    processedTitle: 'Verification processed',
    processedText: 'If you started this verification, sign in to the account you started it from to see the result.',
    goToSignIn: 'Go to sign in',
    errorTitle: 'Verification problem',
    clientErrorHeading: 'That did not work',
    serverErrorHeading: 'Something went wrong',
  },
  account: {
    missing: 'Enter the new account number.',
    tooLong: 'The account number is too long: use 8 to 17 digits.',
    digits: 'The account number must be 8 to 17 digits (spaces and hyphens are fine).',
    same: 'That is already your payout account.',
  },
};

const fr: DemoTexts = {
  lang: 'fr',
  brandTagline: 'vérification par SMS hébergée',
  footer:
    'Un intégrateur de référence pour le kit de vérification par SMS hébergée. Données de démonstration uniquement.',
  nav: { label: 'Principal', home: 'Accueil', activity: 'Activité', verifications: 'Vérifications' },
  signedInAs: 'Connecté en tant que',
  signOut: 'Se déconnecter',
  backHome: 'Retour à l’accueil',
  signin: {
    title: 'Connexion',
    heading: 'Connexion à la démo',
    lead:
      'Choisissez un utilisateur de démonstration. Chacun a un numéro de téléphone enregistré ; le code SMS est ' +
      'envoyé à ce numéro (lisez-le dans la boîte de réception de l’émulateur).',
    button: 'Se connecter',
    buttonLabel: (name) => `Se connecter en tant que ${name}`,
    pickUser: 'Choisissez l’un des utilisateurs de démonstration.',
    note:
      'La connexion est volontairement sans mot de passe : la démo porte sur ce qui se passe après la connexion, ' +
      'quand une action demande une nouvelle vérification par SMS.',
  },
  home: {
    title: 'Accueil',
    welcome: (first) => `Bon retour, ${first}`,
    lead:
      'Les deux actions ci-dessous sont confirmées par un code à usage unique envoyé par SMS à votre téléphone, sur ' +
      'la page du service de vérification.',
    phone: 'Numéro de téléphone',
    verified: '✓ Vérifié',
    notVerified: 'Non vérifié',
    confirmedAt: (when) => `Confirmé le ${when}.`,
    confirmHint: 'Confirmez que vous recevez les SMS à ce numéro.',
    confirm: 'Confirmer votre numéro de téléphone',
    confirmAgain: 'Le confirmer à nouveau',
    payout: 'Compte de versement',
    sensitive: 'Sensible',
    none: 'Aucun pour l’instant',
    addHint: 'Ajoutez le compte qui reçoit vos versements.',
    changedAt: (when) => `Modifié le ${when}.`,
    newAccount: 'Nouveau numéro de compte',
    accountHint: 'De 8 à 17 chiffres. Appliqué seulement après confirmation par un code SMS.',
    accountExample: 'par ex. 0123 4567 8901',
    changePayout: 'Changer de compte de versement',
    codesGoTo: 'Les codes sont envoyés au',
    activityNote:
      'Avec l’émulateur fourni, lisez-les dans sa boîte de réception. Vos vérifications terminées sont listées sous',
  },
  activity: {
    title: 'Activité',
    lead:
      'Chaque action ci-dessous a été exécutée une seule fois, dans la même transaction de base de données qui a ' +
      'marqué sa session de vérification comme traitée.',
    empty: 'Rien pour l’instant. Confirmez votre numéro ou changez de compte de versement depuis l’',
    emptyLink: 'Accueil',
    caption: 'Actions exécutées, les plus récentes d’abord',
    when: 'Date',
    action: 'Action',
    details: 'Détails',
    session: 'Session de vérification',
    emailsTitle: 'E-mails envoyés',
    emailsLead:
      'Envoyés après chaque résultat par le hook onOutcome du kit, hors de la transaction ' +
      '(au moins une fois ; un par résultat).',
    noEmails: 'Aucun e-mail pour l’instant.',
  },
  actionLabels: { confirm_phone: 'Numéro de téléphone confirmé', change_payout: 'Compte de versement changé' },
  verifications: {
    title: 'Vérifications',
    lead:
      'Toutes les vérifications que vous avez lancées, les plus récentes d’abord, telles que le kit les conserve : ' +
      'le numéro est masqué, et les détails d’une vérification terminée sont supprimés après 30 jours.',
    empty: 'Aucune vérification pour l’instant.',
    started: 'Lancée',
    action: 'Action',
    outcome: 'Résultat',
    settledBy: 'Conclue par',
    number: 'Numéro',
    removed: 'supprimé',
    outcomes: {
      pending: 'En attente du code',
      fulfilled: 'Vérifiée et appliquée',
      failed: 'Non vérifiée',
      expired: 'Expirée',
      superseded: 'Remplacée par une demande plus récente',
    },
    sources: {
      landing: 'votre retour sur le site',
      mobile: 'l’application mobile',
      sweep: 'la vérification en arrière-plan',
    },
    justNow: 'à l’instant',
    minutesAgo: (n) => `il y a ${n} min`,
    hoursAgo: (n) => `il y a ${n} h`,
    daysAgo: (n) => `il y a ${n} jours`,
  },
  verified: {
    phoneTitle: 'Numéro de téléphone confirmé',
    phoneText: (phone) => `Vous avez confirmé que le ${phone} est le vôtre.`,
    payoutTitle: 'Compte de versement changé',
    payoutText: (last4) => `Les versements vont désormais sur le compte se terminant par ${last4}.`,
    payoutUpdated: 'Votre compte de versement a été mis à jour.',
    change: 'Changement',
    when: 'Date',
    session: 'Session',
    viewActivity: 'Voir l’activité',
  },
  errors: {
    signinRefused: {
      title: 'Connexion refusée',
      message:
        'Le formulaire de connexion a expiré ou venait d’un autre site. Ouvrez la page de connexion et réessayez.',
    },
    signoutRefused: {
      title: 'Déconnexion refusée',
      message: 'Le formulaire a expiré ; revenez en arrière et réessayez.',
    },
    notFound: { title: 'Page introuvable', message: 'Il n’y a rien à cette adresse.' },
    badRequest: { title: 'Cette requête n’a pas pu être lue', message: 'Revenez en arrière et réessayez.' },
    server: { title: 'Une erreur s’est produite', message: 'Rien n’a été modifié. Réessayez dans un instant.' },
  },
  kit: {
    processedTitle: 'Vérification traitée',
    processedText:
      'Si vous avez lancé cette vérification, connectez-vous au compte depuis lequel vous l’avez lancée pour voir le ' +
      'résultat.',
    goToSignIn: 'Aller à la connexion',
    errorTitle: 'Problème de vérification',
    clientErrorHeading: 'Cela n’a pas fonctionné',
    serverErrorHeading: 'Une erreur s’est produite',
  },
  account: {
    missing: 'Saisissez le nouveau numéro de compte.',
    tooLong: 'Le numéro de compte est trop long : utilisez de 8 à 17 chiffres.',
    digits: 'Le numéro de compte doit comporter de 8 à 17 chiffres (espaces et tirets acceptés).',
    same: 'C’est déjà votre compte de versement.',
  },
};

export const DEMO_TEXTS: Record<DemoLocale, DemoTexts> = { en, fr };

export function demoTexts(req: Request): DemoTexts {
  return DEMO_TEXTS[demoLocale(req)];
}

/** The demo's texts for a page the kit rendered, by the kit messages' language. */
export function textsFor(messages: KitMessages): DemoTexts {
  return messages.lang === 'fr' ? fr : en;
}

const SERVER_PROBLEM_FR =
  'La vérification n’a pas pu aboutir à cause d’un problème de notre côté. Rien n’a été modifié ; réessayez plus ' +
  'tard.';
const START_AGAIN_FR = 'Recommencez depuis la page d’où vous venez.';

/** The kit's messages in the demo: English with the demo's wording, and a complete French set. */
export const demoKitMessages: Record<DemoLocale, KitMessagesInput> = {
  en: {
    failures: {
      otp_locked: {
        title: 'Too many incorrect codes',
        text:
          'The code was entered incorrectly too many times, so this verification was locked. Nothing was changed. ' +
          'You can start a new verification with a new code.',
      },
      device_changed: {
        title: 'Verification moved to another device',
        text:
          'The verification was continued on a different device or browser than the one it started on, so it was ' +
          'stopped for your safety. Nothing was changed; start again on this device.',
      },
      session_binding_failed: {
        title: 'Verification could not be tied to this browser',
        text:
          'The verification page could not confirm it was opened from this browser (for example, from a copied ' +
          'link). Nothing was changed; start again from this site.',
      },
      expired: {
        title: 'This verification expired',
        text: 'The verification was not finished in time, so nothing was changed. You can start a new one.',
      },
      generic: {
        title: 'Verification failed',
        text: 'The verification did not succeed, so nothing was changed. You can start a new one.',
      },
    },
    pending: {
      stopped:
        'The verification service has not confirmed the result yet. You do not need to wait: if you entered the ' +
        'code, the change is applied in the background within a few minutes and appears under Activity.',
    },
  },
  fr: {
    lang: 'fr',
    dir: 'ltr',
    startNew: 'Commencer une nouvelle vérification',
    nothingChanged: 'Rien n’a été modifié.',
    handoff: {
      title: 'Continuer vers la vérification',
      text: 'Vous êtes redirigé vers la page de vérification. Si rien ne se passe, appuyez sur Continuer.',
      continue: 'Continuer',
    },
    complete: {
      title: 'Vérification terminée',
      text:
        'Cette vérification a été traitée. Si vous l’avez lancée, connectez-vous au compte depuis lequel vous l’avez ' +
        'lancée pour voir le résultat.',
    },
    failures: {
      otp_locked: {
        title: 'Trop de codes incorrects',
        text:
          'Le code a été saisi incorrectement trop de fois, cette vérification a donc été verrouillée. Rien n’a été ' +
          'modifié. Vous pouvez lancer une nouvelle vérification avec un nouveau code.',
      },
      device_changed: {
        title: 'Vérification poursuivie sur un autre appareil',
        text:
          'La vérification a été poursuivie sur un autre appareil ou navigateur que celui où elle a commencé ; elle ' +
          'a été arrêtée pour votre sécurité. Recommencez sur cet appareil.',
      },
      session_binding_failed: {
        title: 'La vérification n’a pas pu être liée à ce navigateur',
        text:
          'La page de vérification n’a pas pu confirmer qu’elle avait été ouverte depuis ce navigateur (par exemple ' +
          'depuis un lien copié). Recommencez depuis ce site.',
      },
      expired: {
        title: 'Cette vérification a expiré',
        text:
          'La vérification n’a pas été terminée à temps, rien n’a donc été modifié. Vous pouvez en lancer une ' +
          'nouvelle.',
      },
      superseded: {
        title: 'Une demande plus récente a remplacé celle-ci',
        text:
          'Vous avez confirmé une demande plus récente du même type, et c’est celle-ci qui a été appliquée. ' +
          'Cette demande plus ancienne ne sera jamais appliquée.',
      },
      generic: {
        title: 'La vérification a échoué',
        text: 'La vérification n’a pas abouti, rien n’a donc été modifié. Vous pouvez en lancer une nouvelle.',
      },
    },
    pending: {
      title: 'Confirmation de votre vérification',
      waiting:
        'En attente de la confirmation du service de vérification. Appuyez sur Vérifier à nouveau dans quelques ' +
        'secondes pour voir le résultat.',
      checking:
        'En attente de la confirmation du service de vérification. Cette page vérifie à nouveau d’elle-même toutes ' +
        'les quelques secondes.',
      stoppedTitle: 'Confirmation toujours en cours',
      stopped:
        'Le service de vérification n’a pas encore confirmé le résultat. Inutile d’attendre ici : si vous avez ' +
        'saisi le code, la modification sera appliquée en arrière-plan d’ici quelques minutes et apparaîtra dans ' +
        'Activité.',
      resultReady: 'Le résultat est arrivé. Affichage en cours.',
      checkAgain: 'Vérifier à nouveau',
    },
    startAgain: {
      title: 'Recommencer la vérification',
      heading: 'Cette page de vérification a déjà été utilisée',
      text:
        'Pour votre sécurité, une page de vérification ne s’ouvre qu’une seule fois. Lancez une nouvelle ' +
        'vérification pour continuer.',
    },
    error: { title: 'Problème de vérification', heading: 'Un problème est survenu pendant la vérification' },
    errors: {
      invalid_options: SERVER_PROBLEM_FR,
      mounted_at_wrong_path: SERVER_PROBLEM_FR,
      not_signed_in: 'Connectez-vous pour continuer.',
      csrf_failed: 'Le formulaire a expiré ou n’a pas été envoyé depuis ce site ; rechargez la page et réessayez.',
      unknown_action:
        'Cette demande de vérification ne correspond à aucune action connue ; revenez en arrière et réessayez.',
      invalid_action_params: 'Le formulaire n’a pas pu être accepté ; revenez en arrière, vérifiez-le et réessayez.',
      rate_limited: 'Trop de tentatives de vérification.',
      invalid_return_params: `Ce lien de vérification est incomplet ou mal formé. ${START_AGAIN_FR}`,
      unknown_attempt: `Aucune tentative de vérification ne correspond à ce lien. ${START_AGAIN_FR}`,
      session_mismatch: `Ce lien n’appartient pas à la vérification qu’il désigne. ${START_AGAIN_FR}`,
      service_response_mismatch: 'La vérification n’a pas pu être confirmée, rien n’a donc été modifié. Recommencez.',
      service_unavailable: 'Le service de vérification est injoignable pour le moment. Réessayez dans un instant.',
      service_rejected: SERVER_PROBLEM_FR,
      service_protocol_error: SERVER_PROBLEM_FR,
      fulfil_failed: SERVER_PROBLEM_FR,
      method_not_allowed: 'Une vérification se lance en envoyant un formulaire (POST), pas en ouvrant un lien.',
      client_error: 'Cette requête n’a pas pu être acceptée ; revenez en arrière et réessayez.',
      server_error: SERVER_PROBLEM_FR,
    },
    retryAfter: (seconds) =>
      seconds < 90 ? `Réessayez dans ${seconds} secondes.` : `Réessayez dans ${Math.ceil(seconds / 60)} minutes.`,
  },
};
